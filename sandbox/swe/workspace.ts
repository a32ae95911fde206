/**
 * Puts a task's base repository into a sandbox's working directory and makes it a git repository
 * with one commit, so the agent's changes (new files included) can be captured as a diff. Git is
 * configured for the sandbox user (`safe.directory=*`, an identity), since the uid inside may not
 * own the files.
 *
 * @module
 */
import { type Sandbox, SandboxError } from "../sandbox.ts";
import type { SweTask } from "./task.ts";

/** Git settings every sandbox git command sees (`git config --global`). */
const GIT_SETUP = [
  "git config --global safe.directory '*'",
  "git config --global user.name rollgate",
  "git config --global user.email rollgate@localhost",
  "git config --global init.defaultBranch main",
  "git config --global core.autocrlf false",
].join(" && ");

/** A prepared workspace. */
export interface Workspace {
  /** The sandbox's working directory (the repository root). */
  dir: string;
  /** Commit id of the base state; diffs are taken against it. */
  baseCommit: string;
}

/** Copies `task.files` into `sandbox.workdir` and commits them. */
export async function prepareWorkspace(sandbox: Sandbox, task: SweTask): Promise<Workspace> {
  for (const f of task.files) {
    await sandbox.writeFile(f.path, f.data, { mode: f.executable ? 0o755 : 0o644 });
  }
  const script = `set -e; ${GIT_SETUP}; git init -q .; git add -A; ` +
    `git commit -q --no-verify --allow-empty -m 'base ${task.instance_id}'; git rev-parse HEAD`;
  const r = await sandbox.exec(script, { timeoutMs: 60_000 });
  const sha = r.stdout.trim().split("\n").pop() ?? "";
  if (r.exitCode !== 0 || !/^[0-9a-f]{40,64}$/.test(sha)) {
    throw new SandboxError(
      `preparing ${task.instance_id} in ${sandbox.id} failed (exit ${r.exitCode}): ${r.stderr}`,
    );
  }
  return { dir: sandbox.workdir, baseCommit: sha };
}
