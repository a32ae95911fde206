/**
 * The Docker Engine API provider (Docker or Podman's compatible service, API v1.41, Unix socket).
 *
 * A sandbox is a container kept alive by a sleeping shell, network `none` unless the spec asks
 * for `full`. With `spec.gateway.fetch` the rollout's gateway socket and the forwarder are
 * bind-mounted at `/run/rollgate` and the forwarder is started as the container starts: the agent
 * reaches `http://127.0.0.1:8787` and nothing else (the image needs `python3`; the engine must
 * run on this host). Task images name `"local"` map to `defaultImage`.
 *
 * @example
 * ```ts
 * const docker = new DockerProvider({ defaultImage: "localhost/swe-base:bookworm" });
 * await docker.preflight();
 * const sbx = await docker.create({ image: "local" });
 * ```
 *
 * @module
 */
import {
  BRIDGE_DIR,
  FORWARDER_PORT,
  FORWARDER_SCRIPT,
  serveRolloutSocket,
  START_FORWARDER,
} from "../gateway_bridge/mod.ts";
import {
  DEFAULT_WORKDIR,
  networkMode,
  SandboxError,
  type SandboxProvider,
  type SandboxSpec,
} from "../sandbox.ts";
import { DockerSandbox } from "./docker_sandbox.ts";
import { DockerEngine, dockerSocketCandidates, findDockerSocket } from "./engine_client.ts";

const KEEP_ALIVE = "while :; do sleep 3600; done";

export interface DockerProviderOptions {
  /** Engine socket; default `DOCKER_HOST` (unix://), `/var/run/docker.sock`, Podman's. */
  socketPath?: string;
  /** Image used for specs whose image is `"local"` (or empty). */
  defaultImage?: string;
  /** Extra `HostConfig` fields (e.g. `Ulimits`, `Runtime`). */
  hostConfig?: Record<string, unknown>;
  /** Parent of the per-sandbox bridge directories; default the system temp dir. */
  tempDir?: string;
}

/** Docker Engine API {@link SandboxProvider}. */
export class DockerProvider implements SandboxProvider {
  readonly name = "docker";
  #opts: DockerProviderOptions;

  constructor(opts: DockerProviderOptions = {}) {
    this.#opts = opts;
  }

  #socket(): string {
    const path = this.#opts.socketPath ?? findDockerSocket();
    if (!path) {
      throw new SandboxError(
        `docker sandbox: no Docker API socket (looked at ${
          dockerSocketCandidates().join(", ")
        }); ` +
          "set DOCKER_HOST=unix:///path/to.sock, start `podman system service`, or use --sandbox local",
      );
    }
    return path;
  }

  async preflight(): Promise<void> {
    const engine = new DockerEngine(this.#socket());
    try {
      await engine.call("GET", "/_ping", { timeoutMs: 5_000 });
    } catch (err) {
      throw new SandboxError(
        `docker sandbox: the engine at unix://${engine.socketPath} does not answer: ` +
          `${(err as Error).message}; start Docker/Podman or use --sandbox local`,
        { cause: err },
      );
    } finally {
      engine.close();
    }
  }

  #image(spec: SandboxSpec): string {
    const image = !spec.image || spec.image === "local" ? this.#opts.defaultImage : spec.image;
    if (!image) {
      throw new SandboxError(
        `docker sandbox: image "${spec.image}" needs DockerProviderOptions.defaultImage`,
      );
    }
    return image;
  }

  async create(spec: SandboxSpec): Promise<DockerSandbox> {
    const mode = networkMode(spec);
    if (mode === "gateway-only" && !spec.gateway?.fetch) {
      throw new SandboxError("docker sandbox: network gateway-only needs spec.gateway.fetch");
    }
    const image = this.#image(spec);
    const engine = new DockerEngine(this.#socket());
    const workdir = spec.workdir ?? DEFAULT_WORKDIR;
    let hostDir: string | undefined;
    let socket: ReturnType<typeof serveRolloutSocket> | undefined;
    let containerId: string | undefined;
    try {
      let main = KEEP_ALIVE;
      const binds: string[] = [];
      if (mode === "gateway-only") {
        hostDir = await Deno.makeTempDir({ dir: this.#opts.tempDir, prefix: "rollgate-dkr-" });
        await Deno.copyFile(FORWARDER_SCRIPT, `${hostDir}/forwarder.py`);
        socket = serveRolloutSocket({
          path: `${hostDir}/gw.sock`,
          rolloutId: spec.gateway!.rolloutId,
          fetch: spec.gateway!.fetch!,
        });
        binds.push(`${hostDir}:${BRIDGE_DIR}`);
        main = `${START_FORWARDER} && : > ${BRIDGE_DIR}/ready || exit 125; ${KEEP_ALIVE}`;
      }
      const hostConfig: Record<string, unknown> = { Binds: binds, ...this.#opts.hostConfig };
      if (mode !== "full") hostConfig.NetworkMode = "none";
      if (spec.resources?.memoryMiB) hostConfig.Memory = spec.resources.memoryMiB * 1024 * 1024;
      if (spec.resources?.cpu) hostConfig.NanoCpus = Math.round(spec.resources.cpu * 1e9);
      const env = { HOME: "/root", LANG: "C.UTF-8", ...spec.env };
      const created = await engine.json<{ Id: string }>("POST", "/containers/create", {
        json: {
          Image: image,
          Entrypoint: ["/bin/sh", "-c"],
          Cmd: [main],
          WorkingDir: workdir,
          Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
          Labels: { "rollgate.sandbox": "1", ...spec.labels },
          HostConfig: hostConfig,
        },
      });
      containerId = created.Id;
      await engine.call("POST", `/containers/${containerId}/start`);
      if (hostDir) await waitReady(engine, containerId, `${hostDir}/ready`);
      const gatewayUrl = socket
        ? `http://127.0.0.1:${FORWARDER_PORT}`
        : (mode === "full" ? spec.gateway?.url ?? "" : "");
      return new DockerSandbox({
        engine,
        containerId,
        workdir,
        env,
        gatewayUrl,
        socket,
        hostDir,
        lifetimeMs: spec.lifetimeMs,
        ownsEngine: true,
      });
    } catch (err) {
      if (containerId) {
        await engine.call("DELETE", `/containers/${containerId}`, { query: { force: true } })
          .catch(() => {});
      }
      await socket?.close();
      if (hostDir) await Deno.remove(hostDir, { recursive: true }).catch(() => {});
      engine.close();
      throw err;
    }
  }
}

/** Waits for the forwarder's ready marker; fails early when the container stopped. */
async function waitReady(engine: DockerEngine, id: string, marker: string): Promise<void> {
  const until = Date.now() + 15_000;
  while (Date.now() < until) {
    try {
      await Deno.stat(marker);
      return;
    } catch { /* not yet */ }
    const info = await engine.json<{ State: { Running: boolean; ExitCode: number } }>(
      "GET",
      `/containers/${id}/json`,
    );
    if (!info.State.Running) {
      throw new SandboxError(
        `docker sandbox: the gateway forwarder did not start (container exit ${info.State.ExitCode}; ` +
          "the image needs python3)",
      );
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new SandboxError("docker sandbox: the gateway forwarder did not start within 15 s");
}
