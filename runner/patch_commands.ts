/**
 * Patches the scripted self-test policies apply, and the shell command that applies one through
 * the agent's own shell tool: the patch written with a quoted heredoc to a temporary file (no
 * expansion, so any patch text survives), then `git apply`. The file stays in the agent's scratch
 * directory (`$TMPDIR`, outside the repository): Codex refuses commands containing `rm -f`. For
 * a shell tool that refuses command-substitution syntax anywhere outside single quotes (the
 * Gemini CLI reads backticks in a heredoc as one), the patch goes in as single-quoted base64.
 *
 * @module
 */
import { patchPaths, type SweTask, toBase64 } from "../sandbox/mod.ts";

const PATCH_FILE = '"${TMPDIR:-/tmp}/rollgate-fix.patch"';

/** The shell command that applies `patch` in the agent's working directory. */
export function applyPatchCommand(patch: string, encoded = false): string {
  const text = patch.endsWith("\n") ? patch : `${patch}\n`;
  const apply = `git apply --whitespace=nowarn ${PATCH_FILE} && git status --short`;
  if (encoded) {
    const data = toBase64(new TextEncoder().encode(text));
    return `printf '%s' '${data}' | base64 -d > ${PATCH_FILE} && ${apply}`;
  }
  let eof = "ROLLGATE_PATCH_EOF";
  while (text.split("\n").includes(eof)) eof += "_";
  return `cat > ${PATCH_FILE} <<'${eof}'\n${text}${eof}\n${apply}`;
}

/** The first line-oriented text file the gold patch modifies that exists in the base repository. */
function victim(task: SweTask): { path: string; text: string } | undefined {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  for (const path of patchPaths(task.gold_patch)) {
    const file = task.files.find((f) => f.path === path);
    if (!file || file.data.length === 0) continue;
    try {
      return { path, text: decoder.decode(file.data) };
    } catch { /* binary: try the next */ }
  }
  return undefined;
}

/**
 * A deliberately wrong patch for `task` (the `wrong` self-test policy): it empties the first
 * existing source file the gold patch touches, a broken change that fails the hidden tests; for a
 * task with no such file, a no-op edit (a new note file). Either way it applies cleanly, so the
 * grader, not `git apply`, is what gives reward 0.
 */
export function wrongPatch(task: SweTask): string {
  const v = victim(task);
  if (!v) {
    return [
      "diff --git a/ROLLGATE_NOT_A_FIX.txt b/ROLLGATE_NOT_A_FIX.txt",
      "new file mode 100644",
      "--- /dev/null",
      "+++ b/ROLLGATE_NOT_A_FIX.txt",
      "@@ -0,0 +1 @@",
      "+This change does not fix anything.",
      "",
    ].join("\n");
  }
  const endsWithNewline = v.text.endsWith("\n");
  const lines = (endsWithNewline ? v.text.slice(0, -1) : v.text).split("\n");
  const removed = lines.map((l) => `-${l}`);
  if (!endsWithNewline) removed.push("\\ No newline at end of file");
  return [
    `diff --git a/${v.path} b/${v.path}`,
    `--- a/${v.path}`,
    `+++ b/${v.path}`,
    `@@ -1,${lines.length} +0,0 @@`,
    ...removed,
    "",
  ].join("\n");
}
