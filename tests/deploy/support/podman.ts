/**
 * Building and running the rollgate image with rootful Podman for tests, from base images made on
 * this machine (`deploy/local_base.sh`: debootstrap + `podman import`, no image registry).
 *
 * @module
 */

const ROOT = new URL("../../../", import.meta.url).pathname;

/** What this kind of host needs for every container (see reference/sandboxes-and-scale.md §2). */
export const RUN_FLAGS = [
  "--runtime",
  "runc",
  "--ulimit",
  "nofile=8192:8192",
  "--ulimit",
  "nproc=8192:8192",
];

export interface Output {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, killed after `timeoutMs` (then the exit code is the signal's). */
export async function run(cmd: string, args: string[], timeoutMs = 120_000): Promise<Output> {
  const out = await new Deno.Command(cmd, {
    args,
    stdin: "null",
    signal: AbortSignal.timeout(timeoutMs),
  }).output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

/** Like `run`, but a non-zero exit is an error carrying the output. */
export async function must(cmd: string, args: string[], timeoutMs?: number): Promise<string> {
  const out = await run(cmd, args, timeoutMs);
  if (out.code !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} exited ${out.code}:\n${out.stderr}${out.stdout}`);
  }
  return out.stdout;
}

function onPath(name: string): boolean {
  return (Deno.env.get("PATH") ?? "").split(":").concat(["/usr/sbin", "/sbin"]).some((d) => {
    try {
      return Deno.statSync(`${d}/${name}`).isFile;
    } catch {
      return false;
    }
  });
}

/** Why containers cannot run here, in a few words, or null when they can. */
export async function podmanUnavailable(): Promise<string | null> {
  for (const tool of ["podman", "runc", "debootstrap"]) {
    if (!onPath(tool)) return `${tool} is not installed (apt-get install podman runc debootstrap)`;
  }
  if (Deno.uid() !== 0) return "rootful podman and debootstrap need root";
  const info = await run("podman", ["info", "--format", "{{.Host.OCIRuntime.Name}}"]);
  if (info.code !== 0) return `podman cannot run here: ${info.stderr.trim().split("\n").at(-1)}`;
  return null;
}

/** The base images from `deploy/local_base.sh` (made once per machine, then reused). */
export async function localBases(): Promise<{ base: string; build: string }> {
  const out = await must("bash", [ROOT + "deploy/local_base.sh"], 600_000);
  const value = (k: string) => new RegExp(`^${k}=(.+)$`, "m").exec(out)?.[1];
  const base = value("BASE_IMAGE"), build = value("BUILD_IMAGE");
  if (!base || !build) throw new Error(`local_base.sh printed no image names:\n${out}`);
  return { base, build };
}

/** Builds the repository's Dockerfile from the local bases; returns the seconds it took. */
export async function buildImage(
  tag: string,
  bases: { base: string; build: string },
): Promise<number> {
  const started = performance.now();
  await must("podman", [
    "build",
    ...RUN_FLAGS,
    "--format",
    "docker",
    "--build-arg",
    `BASE_IMAGE=${bases.base}`,
    "--build-arg",
    `BUILD_IMAGE=${bases.build}`,
    "--tag",
    tag,
    ROOT,
  ], 900_000);
  return (performance.now() - started) / 1000;
}

export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** Polls `url` until it answers 200; returns the seconds that took. */
export async function waitFor200(url: string, timeoutMs: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    try {
      const res = await fetch(url);
      await res.body?.cancel();
      if (res.status === 200) return (performance.now() - started) / 1000;
    } catch { /* not listening yet */ }
    if (performance.now() - started > timeoutMs) {
      throw new Error(`${url} not ready in ${timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
