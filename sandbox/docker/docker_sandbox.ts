/**
 * One container as a {@link Sandbox}: commands through exec (`docker_exec.ts`), files through the
 * archive endpoint (a one-file tar in, the first file of the answered tar out), teardown with
 * `DELETE /containers/{id}?force=true`, plus the host side of the gateway bridge (the rollout's
 * socket directory, removed on kill).
 *
 * @module
 */
import {
  type ExecOpts,
  type ExecResult,
  type Proc,
  type Sandbox,
  SandboxError,
  type WriteFileOpts,
} from "../sandbox.ts";
import { resolveInside } from "../shell.ts";
import type { RolloutSocket } from "../gateway_bridge/mod.ts";
import { type DockerExec, startDockerExec } from "./docker_exec.ts";
import { DockerApiError, type DockerEngine } from "./engine_client.ts";
import { tarOneFile, untarFirstFile } from "./tar.ts";

export interface DockerSandboxParts {
  engine: DockerEngine;
  containerId: string;
  workdir: string;
  env: Record<string, string>;
  gatewayUrl: string;
  socket?: RolloutSocket;
  /** Host directory of the bridge (socket + forwarder), removed on kill. */
  hostDir?: string;
  lifetimeMs?: number;
  /** Whether `kill` closes the engine client (the provider made it for this sandbox). */
  ownsEngine: boolean;
}

/** A Docker/Podman container. */
export class DockerSandbox implements Sandbox {
  readonly id: string;
  readonly provider = "docker";
  readonly gatewayUrl: string;
  readonly workdir: string;
  #p: DockerSandboxParts;
  #live = new Set<DockerExec>();
  #killed: Promise<void> | undefined;
  #reaper: ReturnType<typeof setTimeout> | undefined;

  constructor(parts: DockerSandboxParts) {
    this.#p = parts;
    this.id = parts.containerId.slice(0, 12);
    this.gatewayUrl = parts.gatewayUrl;
    this.workdir = parts.workdir;
    if (parts.lifetimeMs) {
      const reaper = setTimeout(() => void this.kill(), parts.lifetimeMs);
      Deno.unrefTimer(reaper as unknown as number);
      this.#reaper = reaper;
    }
  }

  /** The full container id. */
  get containerId(): string {
    return this.#p.containerId;
  }

  #alive(): void {
    if (this.#killed) throw new SandboxError(`sandbox ${this.id} was killed`);
  }

  async #start(cmd: string, opts: ExecOpts): Promise<DockerExec> {
    this.#alive();
    const exec = await startDockerExec(
      {
        engine: this.#p.engine,
        containerId: this.#p.containerId,
        env: this.#p.env,
        workdir: this.workdir,
        putFile: (path, data) => this.writeFile(path, data, { mode: 0o600 }),
      },
      cmd,
      opts,
    );
    this.#live.add(exec);
    exec.done.finally(() => this.#live.delete(exec));
    return exec;
  }

  async exec(cmd: string, opts: ExecOpts = {}): Promise<ExecResult> {
    return await (await this.#start(cmd, opts)).done;
  }

  async spawn(cmd: string, opts: ExecOpts = {}): Promise<Proc> {
    const exec = await this.#start(cmd, opts);
    return { id: exec.id, wait: () => exec.done, kill: () => exec.kill() };
  }

  async writeFile(path: string, data: string | Uint8Array, opts: WriteFileOpts = {}) {
    this.#alive();
    const inside = resolveInside(this.workdir, path);
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    await this.#p.engine.call("PUT", `/containers/${this.#p.containerId}/archive`, {
      query: { path: "/" },
      body: tarOneFile(inside.slice(1), bytes, opts.mode ?? 0o644),
      headers: { "content-type": "application/x-tar" },
    });
  }

  async readFile(path: string): Promise<Uint8Array> {
    this.#alive();
    const inside = resolveInside(this.workdir, path);
    let res: Response;
    try {
      res = await this.#p.engine.request("GET", `/containers/${this.#p.containerId}/archive`, {
        query: { path: inside },
      });
    } catch (err) {
      if (err instanceof DockerApiError && err.status === 404) {
        throw new SandboxError(`${inside}: no such file in sandbox ${this.id}`);
      }
      throw err;
    }
    const file = untarFirstFile(new Uint8Array(await res.arrayBuffer()));
    const base = inside.slice(inside.lastIndexOf("/") + 1);
    if (!file || file.name.replace(/^\.?\//, "") !== base) {
      throw new SandboxError(`${inside} is not a regular file in sandbox ${this.id}`);
    }
    return file.data;
  }

  kill(): Promise<void> {
    this.#killed ??= (async () => {
      clearTimeout(this.#reaper);
      try {
        await this.#p.engine.call("DELETE", `/containers/${this.#p.containerId}`, {
          query: { force: true, v: true },
        });
      } catch (err) {
        if (!(err instanceof DockerApiError && err.status === 404)) throw err;
      } finally {
        await Promise.all([...this.#live].map((e) => e.done.catch(() => {})));
        await this.#p.socket?.close();
        if (this.#p.hostDir) {
          await Deno.remove(this.#p.hostDir, { recursive: true }).catch(() => {});
        }
        if (this.#p.ownsEngine) this.#p.engine.close();
      }
    })();
    return this.#killed;
  }
}
