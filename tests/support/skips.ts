/**
 * Test groups that need something this machine lacks (bubblewrap, a container engine, an agent
 * CLI, the Python reference venv) are skipped, and say so: {@link skipGroup} records the group
 * and why in the file `ROLLGATE_SKIP_LOG` names (set by `npm test`), and `npm test` ends with one
 * line listing them all (`tests/support/report_skips.ts`).
 *
 * @module
 */
import { LocalProvider } from "../../sandbox/mod.ts";
import { agentInstallHint, binaryInstalled, type Harness } from "../../harness/mod.ts";
import { referencePython } from "../reference/python_env.ts";

/** One skipped group, as the log holds it (one JSON object per line). */
export interface Skip {
  group: string;
  reason: string;
}

/**
 * `true` (the test's `ignore`) when `reason` is given: the group is skipped and recorded;
 * `false` when there is no reason to skip.
 */
export function skipGroup(group: string, reason: string | undefined): boolean {
  if (!reason) return false;
  const log = Deno.env.get("ROLLGATE_SKIP_LOG");
  const line = JSON.stringify({ group, reason } satisfies Skip) + "\n";
  if (log) Deno.writeTextFileSync(log, line, { append: true });
  return true;
}

let bwrap: Promise<string | undefined> | undefined;
/** Why the local (bubblewrap) sandbox cannot run here, in a few words; undefined when it can. */
export function localSandboxMissing(): Promise<string | undefined> {
  return bwrap ??= new LocalProvider().preflight().then(
    () => undefined,
    (e: Error) => e.message.replace(/^local sandbox: /, "").split(";")[0],
  );
}

/** Why `h`'s CLI cannot run here; undefined when it is installed. */
export function cliMissing(h: Harness): string | undefined {
  return binaryInstalled(h) ? undefined : `${h.bin} not installed (${agentInstallHint(h)})`;
}

/** Why the `transformers` cross-checks cannot run; undefined when the venv is there. */
export function referenceMissing(): string | undefined {
  return referencePython() === null ? "no .venv (npm run pretest)" : undefined;
}
