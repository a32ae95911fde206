/**
 * Parallel tool results in their calls' order, for the delta of formats whose template writes
 * them that way (a full render sees the calls; a delta looks them up in `DeltaHistory`):
 *
 * - `"stable"` (DeepSeek V4): the leading run of results sorted by their call's position, an
 *   unknown id first, ties as given;
 * - `"one-to-one"` (GLM-5.3): reordered only when the run answers every call of one assistant
 *   message exactly once; otherwise as given.
 *
 * @module
 */
import type { Message } from "../../canonical/mod.ts";
import type { DeltaHistory } from "./family.ts";

export type ResultOrder = "stable" | "one-to-one";

/** `messages` with its leading run of tool results in call order (the same array if unchanged). */
export function resultsInCallOrder(
  messages: readonly Message[],
  history: DeltaHistory | undefined,
  order: ResultOrder,
): readonly Message[] {
  let run = 0;
  while (messages[run]?.role === "tool") run++;
  if (run < 2 || !history?.callPosition) return messages;
  const positions = messages.slice(0, run).map((m) =>
    m.role === "tool" ? history.callPosition!(m.tool_call_id) : undefined
  );
  if (order === "one-to-one") {
    const indexes = new Set(positions.map((p) => p?.index));
    const whole = positions.every((p) => p !== undefined && p.count === run) &&
      indexes.size === run;
    if (!whole) return messages;
  }
  const sorted = messages.slice(0, run).map((m, k) => ({ m, key: positions[k]?.index ?? 0 }))
    .sort((a, b) => a.key - b.key).map((x) => x.m);
  return [...sorted, ...messages.slice(run)];
}
