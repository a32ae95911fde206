/**
 * The local sandbox provider (the default): bubblewrap over a per-sandbox host directory, offline
 * except for the rollout's gateway socket. Needs `bwrap` (apt `bubblewrap`) and, for sandboxes
 * with a gateway, `python3` on the host's `/usr` (the forwarder).
 *
 * @example
 * ```ts
 * import { LocalProvider } from "./mod.ts";
 *
 * const provider = new LocalProvider();
 * await provider.preflight();
 * const sbx = await provider.create({
 *   image: "local",
 *   gateway: { rolloutId: "r1", fetch: () => Response.json({ data: [] }) },
 * });
 * await sbx.exec(`curl -s ${sbx.gatewayUrl}/rollout/r1/v1/models`);
 * await sbx.kill();
 * ```
 *
 * @module
 */
import {
  DEFAULT_WORKDIR,
  networkMode,
  SandboxError,
  type SandboxProvider,
  type SandboxSpec,
} from "../sandbox.ts";
import { INSIDE } from "./bwrap_args.ts";
import { LocalSandbox } from "./bwrap_sandbox.ts";
import { FORWARDER_PORT, FORWARDER_SCRIPT, serveRolloutSocket } from "../gateway_bridge/mod.ts";

/** `agents/node_modules` of this repository (the pinned agent CLIs). */
export const AGENTS_NODE_MODULES = new URL("../../agents/node_modules", import.meta.url).pathname;

/**
 * `agents/venv` of this repository: the pinned Python agent CLIs in a virtual environment of the
 * host's `/usr/bin/python3`, which the sandbox sees too (`agents/install_python.sh`).
 */
export const AGENTS_VENV = new URL("../../agents/venv", import.meta.url).pathname;

export interface LocalProviderOptions {
  /** Parent directory of the sandbox roots; default the system temp dir. */
  tempDir?: string;
  /** Agent CLIs, bound read-only at the same path, `.bin` on `PATH`; `null` for none. */
  agentsDir?: string | null;
  /** Python agent CLIs' venv, bound read-only at the same path, `bin` on `PATH`; `null` for none. */
  agentsVenv?: string | null;
  /** Extra host paths bound read-only at the same path. */
  roBinds?: string[];
  /** `bwrap` executable; default `bwrap` on `PATH`. */
  bwrap?: string;
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

function onHostPath(name: string): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (dir && exists(`${dir}/${name}`)) return `${dir}/${name}`;
  }
  return undefined;
}

/** The directory of a `node` that lives outside `/usr` (it must be bound in), if any. */
function nodeOutsideUsr(): string | undefined {
  const node = onHostPath("node");
  if (!node) return undefined;
  const real = Deno.realPathSync(node);
  if (real.startsWith("/usr/")) return undefined;
  return real.slice(0, real.lastIndexOf("/"));
}

/** bubblewrap-backed {@link SandboxProvider}. */
export class LocalProvider implements SandboxProvider {
  readonly name = "local";
  #opts: LocalProviderOptions;
  #bwrap: string;

  constructor(opts: LocalProviderOptions = {}) {
    this.#opts = opts;
    this.#bwrap = opts.bwrap ?? onHostPath("bwrap") ?? "bwrap";
  }

  async preflight(): Promise<void> {
    let out: Deno.CommandOutput;
    try {
      out = await new Deno.Command(this.#bwrap, {
        args: ["--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "--", "/bin/true"],
        stdout: "null",
        stderr: "piped",
      }).output();
    } catch (err) {
      throw new SandboxError(
        `local sandbox: cannot run bubblewrap (${this.#bwrap}): ${(err as Error).message}; ` +
          "install it (apt-get install bubblewrap) or choose another --sandbox",
        { cause: err },
      );
    }
    if (!out.success) {
      const msg = new TextDecoder().decode(out.stderr).trim();
      throw new SandboxError(
        `local sandbox: bubblewrap cannot create namespaces here: ${msg}; ` +
          "enable unprivileged user namespaces (kernel.unprivileged_userns_clone=1) or run as root",
      );
    }
    if (!exists("/usr/bin/python3")) {
      throw new SandboxError("local sandbox: /usr/bin/python3 is missing (the gateway forwarder)");
    }
  }

  async create(spec: SandboxSpec): Promise<LocalSandbox> {
    const mode = networkMode(spec);
    if (mode === "gateway-only" && !spec.gateway?.fetch) {
      throw new SandboxError("local sandbox: network gateway-only needs spec.gateway.fetch");
    }
    const root = await Deno.makeTempDir({ dir: this.#opts.tempDir, prefix: "rollgate-sbx-" });
    try {
      for (const dir of ["workspace", "home", "tmp"]) await Deno.mkdir(`${root}/${dir}`);
      await Deno.chmod(`${root}/tmp`, 0o1777);
      const roBinds = [...(this.#opts.roBinds ?? [])];
      const path = ["/usr/local/bin", "/usr/bin", "/bin"];
      const agents = this.#opts.agentsDir === undefined
        ? AGENTS_NODE_MODULES
        : this.#opts.agentsDir;
      if (agents && exists(agents)) {
        roBinds.push(agents);
        path.unshift(`${agents}/.bin`);
      }
      const venv = this.#opts.agentsVenv === undefined ? AGENTS_VENV : this.#opts.agentsVenv;
      if (venv && exists(venv)) {
        roBinds.push(venv);
        path.unshift(`${venv}/bin`);
      }
      const nodeDir = nodeOutsideUsr();
      if (nodeDir) {
        roBinds.push(nodeDir.slice(0, nodeDir.lastIndexOf("/")) || nodeDir);
        path.unshift(nodeDir);
      }
      const id = `local-${root.slice(root.lastIndexOf("rollgate-sbx-") + 13)}`;
      const socket = mode === "gateway-only"
        ? serveRolloutSocket({
          path: `${root}/gw.sock`,
          rolloutId: spec.gateway!.rolloutId,
          fetch: spec.gateway!.fetch!,
        })
        : undefined;
      const gatewayUrl = socket
        ? `http://127.0.0.1:${FORWARDER_PORT}`
        : (mode === "full" ? spec.gateway?.url ?? "" : "");
      return new LocalSandbox({
        id,
        workdir: spec.workdir ?? DEFAULT_WORKDIR,
        env: {
          PATH: path.join(":"),
          HOME: INSIDE.home,
          USER: "agent",
          LANG: "C.UTF-8",
          TERM: "dumb",
          TMPDIR: INSIDE.tmp,
          ...spec.env,
        },
        gatewayUrl,
        socket,
        lifetimeMs: spec.lifetimeMs,
        layout: {
          root,
          bwrap: this.#bwrap,
          shareNet: mode === "full",
          gatewaySocket: socket?.path,
          forwarder: socket ? FORWARDER_SCRIPT : undefined,
          roBinds,
        },
      });
    } catch (err) {
      await Deno.remove(root, { recursive: true }).catch(() => {});
      throw err;
    }
  }
}
