/**
 * The bubblewrap command line of one command in a local sandbox (pure; no I/O besides reading
 * which top-level system paths are symlinks).
 *
 * Inside: read-only `/usr` and `/etc` (and `/bin`, `/lib*`, `/sbin` as on the host), fresh
 * `/proc` and `/dev`, the sandbox's own writable `/workspace`, `/home/agent` and `/tmp` (host
 * directories under the sandbox root, so they persist across commands), a tmpfs `/run` holding the
 * gateway socket and the forwarder, extra read-only binds (agent CLIs, a node outside `/usr`), all
 * namespaces unshared (network: only `lo`), no capabilities, a new session, a cleared environment,
 * and `--die-with-parent`, so killing the `bwrap` process ends everything inside.
 *
 * @module
 */
import { BRIDGE_DIR, START_FORWARDER } from "../gateway_bridge/mod.ts";

/** Mount points of the writable sandbox directories. */
export const INSIDE = {
  workspace: "/workspace",
  home: "/home/agent",
  tmp: "/tmp",
  /** Directory (tmpfs) with the gateway socket and the forwarder script. */
  run: BRIDGE_DIR,
} as const;

/** Host-side layout and options of one sandbox. */
export interface BwrapLayout {
  /** The sandbox's host root: holds `workspace/`, `home/`, `tmp/`. */
  root: string;
  /** `bwrap` executable. */
  bwrap: string;
  /** Share the host's network namespace (`network: "full"`). */
  shareNet: boolean;
  /** Host path of the rollout's gateway socket, mounted at `/run/rollgate/gw.sock`. */
  gatewaySocket?: string;
  /** Host path of `forwarder.py`, mounted at `/run/rollgate/forwarder.py`. */
  forwarder?: string;
  /** Extra host paths bound read-only at the same path. */
  roBinds: string[];
}

const SYSTEM_DIRS = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"];

function systemMounts(): string[] {
  const args = ["--ro-bind", "/usr", "/usr"];
  for (const dir of SYSTEM_DIRS) {
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(`/${dir}`);
    } catch {
      continue;
    }
    if (info.isSymlink) args.push("--symlink", Deno.readLinkSync(`/${dir}`), `/${dir}`);
    else if (info.isDirectory) args.push("--ro-bind", `/${dir}`, `/${dir}`);
  }
  return args;
}

/**
 * The script run by `bash -c` inside: start the forwarder (when there is a gateway) and wait for
 * it to listen, then `exec` the user's command, passed as `$1` so it needs no quoting.
 */
export function wrapperScript(layout: BwrapLayout): string {
  if (!layout.gatewaySocket || !layout.forwarder) return 'exec /bin/bash -c "$1"';
  return `${START_FORWARDER} || { echo "rollgate: gateway forwarder failed to start" >&2; exit 125; }; ` +
    'exec /bin/bash -c "$1"';
}

/** `bwrap` argv running `cmd` in `cwd` with exactly `env`. */
export function bwrapArgs(
  layout: BwrapLayout,
  cmd: string,
  cwd: string,
  env: Record<string, string>,
): string[] {
  const args = [layout.bwrap, ...systemMounts(), "--ro-bind", "/etc", "/etc"];
  args.push("--proc", "/proc", "--dev", "/dev");
  args.push("--bind", `${layout.root}/tmp`, INSIDE.tmp);
  args.push("--bind", `${layout.root}/workspace`, INSIDE.workspace);
  args.push("--bind", `${layout.root}/home`, INSIDE.home);
  args.push("--tmpfs", "/run", "--dir", INSIDE.run);
  if (layout.gatewaySocket && layout.forwarder) {
    args.push("--ro-bind", layout.forwarder, `${INSIDE.run}/forwarder.py`);
    args.push("--bind", layout.gatewaySocket, `${INSIDE.run}/gw.sock`);
  }
  for (const path of layout.roBinds) args.push("--ro-bind", path, path);
  args.push("--unshare-all");
  if (layout.shareNet) args.push("--share-net");
  args.push("--hostname", "sandbox", "--cap-drop", "ALL");
  args.push("--die-with-parent", "--new-session", "--clearenv");
  for (const [key, value] of Object.entries(env)) args.push("--setenv", key, value);
  args.push("--chdir", cwd);
  args.push("--", "/bin/bash", "-c", wrapperScript(layout), "rollgate-sandbox", cmd);
  return args;
}
