/**
 * The last line of `npm test`: every skipped test group and why, from the skip log (see
 * `skips.ts`), groups with the same reason together, e.g.
 * `skipped: docker backend (no Docker API socket …); e2e pi, runner pi (pi not installed …)`,
 * or `skipped: none`.
 *
 * @module
 */
import type { Skip } from "./skips.ts";

/** The one line for the skips in `log` (JSON Lines; a missing or empty log means none). */
export function skippedLine(log: string): string {
  const byReason = new Map<string, Set<string>>();
  for (const line of log.split("\n")) {
    if (!line.trim()) continue;
    const { group, reason } = JSON.parse(line) as Skip;
    if (!byReason.has(reason)) byReason.set(reason, new Set());
    byReason.get(reason)!.add(group);
  }
  if (byReason.size === 0) return "skipped: none";
  const parts = [...byReason].map(([reason, groups]) =>
    `${[...groups].sort().join(", ")} (${reason})`
  );
  return `skipped: ${parts.sort().join("; ")}`;
}

if (import.meta.main) {
  const text = await Deno.readTextFile(Deno.args[0]).catch(() => "");
  console.log(skippedLine(text));
}
