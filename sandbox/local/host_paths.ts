/**
 * Maps paths inside a local sandbox to the host directories behind them, for host-side file
 * access (`writeFile`/`readFile` without starting a process). Only the writable mounts map
 * (`/workspace`, `/home/agent`, `/tmp`); a path whose real location (symlinks followed) leaves its
 * mount is refused, so a symlink planted by the agent cannot read or write host files.
 *
 * @module
 */
import { SandboxError } from "../sandbox.ts";
import { parentDir, resolveInside } from "../shell.ts";
import { INSIDE } from "./bwrap_args.ts";

interface Mount {
  inside: string;
  host: string;
}

function mountsOf(root: string): Mount[] {
  return [
    { inside: INSIDE.workspace, host: `${root}/workspace` },
    { inside: INSIDE.home, host: `${root}/home` },
    { inside: INSIDE.tmp, host: `${root}/tmp` },
  ];
}

function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(`${dir}/`);
}

/** The deepest existing ancestor of `path` (itself included), resolved to its real path. */
async function realAncestor(path: string): Promise<string> {
  let p = path;
  for (;;) {
    try {
      return await Deno.realPath(p);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound) || p === "/") throw err;
      let dangling = false;
      try {
        dangling = (await Deno.lstat(p)).isSymlink;
      } catch { /* does not exist at all */ }
      if (dangling) throw new SandboxError(`refusing to follow a dangling symlink: ${p}`);
      p = parentDir(p);
    }
  }
}

/**
 * The host path behind `path` (relative paths resolve against `workdir`). Throws
 * {@link SandboxError} for paths outside the writable mounts or escaping them through symlinks.
 */
export async function hostPathOf(root: string, workdir: string, path: string): Promise<string> {
  const inside = resolveInside(workdir, path);
  const mount = mountsOf(root).find((m) => within(inside, m.inside));
  if (!mount) {
    throw new SandboxError(
      `${inside} is not in a writable sandbox mount (${INSIDE.workspace}, ${INSIDE.home}, ${INSIDE.tmp})`,
    );
  }
  const host = mount.host + inside.slice(mount.inside.length);
  const realMount = await Deno.realPath(mount.host);
  const real = await realAncestor(host);
  if (!within(real, realMount)) {
    throw new SandboxError(`${inside} resolves outside its sandbox mount (symlink)`);
  }
  return host;
}
