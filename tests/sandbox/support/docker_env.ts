/**
 * A Docker Engine API for tests: an existing socket (`DOCKER_HOST`, `/var/run/docker.sock`,
 * Podman's), or a rootful `podman system service` started on a temp socket with the settings this
 * kind of host needs (runc, explicit ulimits; see reference/sandboxes-and-scale.md §2). The test
 * image is assembled from the host's own binaries (sh, coreutils, setsid, git, python3 + stdlib and
 * their libraries) and imported through the API, so nothing is pulled from a registry.
 *
 * @module
 */
import { DockerApiError, DockerEngine, findDockerSocket } from "../../../sandbox/mod.ts";

/** Bump the version when the image recipe below changes (the engine caches the image). */
export const TEST_IMAGE = "localhost/rollgate-sandbox-test-v1:latest";

export interface DockerTestEnv {
  socketPath: string;
  /** Stops the Podman service when this module started it. */
  close(): Promise<void>;
}

function onPath(name: string): boolean {
  return (Deno.env.get("PATH") ?? "").split(":").some((d) => {
    try {
      return Deno.statSync(`${d}/${name}`).isFile;
    } catch {
      return false;
    }
  });
}

async function ping(socketPath: string): Promise<boolean> {
  const engine = new DockerEngine(socketPath);
  try {
    await engine.call("GET", "/_ping", { timeoutMs: 2_000 });
    return true;
  } catch {
    return false;
  } finally {
    engine.close();
  }
}

/** A usable engine, or the reason there is none. */
export async function dockerTestEnv(): Promise<DockerTestEnv | string> {
  const existing = findDockerSocket();
  if (existing && await ping(existing)) return { socketPath: existing, close: async () => {} };
  if (!onPath("podman") || !onPath("runc")) {
    return "no Docker API socket (DOCKER_HOST, /var/run/docker.sock) and no podman + runc to start one";
  }
  const dir = await Deno.makeTempDir({ prefix: "rollgate-podman-" });
  await Deno.writeTextFile(
    `${dir}/containers.conf`,
    '[containers]\ndefault_ulimits = ["nofile=8192:8192", "nproc=8192:8192"]\n' +
      '[engine]\nruntime = "runc"\n',
  );
  const socketPath = `${dir}/podman.sock`;
  const child = new Deno.Command("podman", {
    args: ["system", "service", "--time=0", `unix://${socketPath}`],
    env: { CONTAINERS_CONF: `${dir}/containers.conf` },
    stdout: "null",
    stderr: "null",
  }).spawn();
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
    await child.status;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  globalThis.addEventListener("unload", () => {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  });
  for (let i = 0; i < 100; i++) {
    if (await ping(socketPath)) return { socketPath, close: stop };
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  return "podman system service did not come up within 10 s";
}

const BUILD_ROOTFS = String.raw`
set -euo pipefail
root=$1; mkdir -p "$root"
copy() { for f in "$@"; do [ -e "$f" ] && cp -L --parents "$f" "$root/" || true; done; }
libs() { ldd "$@" 2>/dev/null | grep -o '/[^ ]*' | sort -u; }
bins="/bin/sh /usr/bin/dash /usr/bin/cat /usr/bin/mkdir /usr/bin/rm /usr/bin/sleep /usr/bin/ls
  /usr/bin/wc /usr/bin/env /usr/bin/true /usr/bin/false /usr/bin/setsid /usr/bin/grep /usr/bin/git
  /usr/bin/python3.11 /usr/bin/id /usr/bin/head /usr/bin/touch"
copy $bins $(libs $bins)
ln -s python3.11 "$root/usr/bin/python3"
tar -C / --exclude='__pycache__' --exclude='test' --exclude='site-packages' --exclude='dist-packages' \
  --exclude='idlelib' --exclude='tkinter' --exclude='ensurepip' --exclude='lib2to3' \
  --exclude='config-3*' -cf - usr/lib/python3.11 | tar -C "$root" -xf -
copy $(libs /usr/lib/python3.11/lib-dynload/*.so)
mkdir -p "$root/tmp" "$root/workspace" "$root/root" "$root/etc" "$root/proc" "$root/dev" "$root/sys"
chmod 1777 "$root/tmp"
echo 'root:x:0:0:root:/root:/bin/sh' > "$root/etc/passwd"
echo 'root:x:0:' > "$root/etc/group"
tar -C "$root" -cf "$2" .
`;

/** Imports the test image unless the engine has it already. */
export async function ensureTestImage(socketPath: string): Promise<void> {
  const engine = new DockerEngine(socketPath);
  try {
    try {
      await engine.call("GET", `/images/${encodeURIComponent(TEST_IMAGE)}/json`);
      return;
    } catch (err) {
      if (!(err instanceof DockerApiError && err.status === 404)) throw err;
    }
    const dir = await Deno.makeTempDir({ prefix: "rollgate-image-" });
    try {
      const out = await new Deno.Command("bash", {
        args: ["-c", BUILD_ROOTFS, "build", `${dir}/root`, `${dir}/root.tar`],
        stdout: "null",
        stderr: "piped",
      }).output();
      if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
      const [repo, tag] = TEST_IMAGE.split(/:(?=[^:]+$)/);
      await engine.call("POST", "/images/create", {
        query: { fromSrc: "-", repo, tag },
        body: await Deno.readFile(`${dir}/root.tar`),
        headers: { "content-type": "application/x-tar" },
        timeoutMs: 120_000,
      });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  } finally {
    engine.close();
  }
}
