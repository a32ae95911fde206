/**
 * Captures what the agent changed in the workspace as one binary-safe diff against the base
 * commit: `git add -A` (new files included, `.gitignore` respected) then
 * `git diff --cached --binary <base>`. Diffing against the recorded base commit, not `HEAD`, keeps
 * changes the agent committed itself.
 *
 * @module
 */
import { type Sandbox, SandboxError } from "../sandbox.ts";
import { shellQuote } from "../shell.ts";

/** The workspace's changes since `baseCommit` (`""` when nothing changed). */
export async function captureDiff(sandbox: Sandbox, baseCommit = "HEAD"): Promise<string> {
  const r = await sandbox.exec(
    `git add -A && git -c core.quotepath=off diff --cached --binary ${shellQuote(baseCommit)}`,
    { timeoutMs: 60_000 },
  );
  if (r.exitCode !== 0) {
    throw new SandboxError(`capturing the diff in ${sandbox.id} failed: ${r.stderr.trim()}`);
  }
  return r.stdout;
}

/** Paths a diff touches (both sides of renames), from its headers and `---`/`+++` lines. */
export function patchPaths(patch: string): string[] {
  const paths = new Set<string>();
  for (const line of patch.split("\n")) {
    const m = /^(?:---|\+\+\+) (?:a|b)\/(.+?)\t?$/.exec(line) ??
      /^(?:---|\+\+\+) "(?:a|b)\/(.+)"$/.exec(line);
    if (m) paths.add(m[1]);
    const rename = /^rename (?:from|to) (.+)$/.exec(line);
    if (rename) paths.add(rename[1]);
    const header = /^diff --git a\/(\S+) b\/(\S+)$/.exec(line); // binary hunks have no ---/+++
    if (header) paths.add(header[1]).add(header[2]);
  }
  return [...paths];
}
