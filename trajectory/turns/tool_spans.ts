/**
 * Where tool outputs sit in a turn's context ids, for the SFT mask on environment tokens.
 *
 * Templates that wrap tool outputs in marker tokens (Qwen3: `<tool_response>` … `</tool_response>`,
 * both single added tokens) let the spans be found on ids alone. The template's wrapping newline
 * is excluded when it is its own token (scaffolding, not environment output).
 *
 * @module
 */
import type { ToolSpan } from "../turn.ts";

export function findToolSpans(
  ids: readonly number[],
  markers: { open: number; close: number; newline: number },
  /** `tool_call_id`s of the rendered tool messages, in order. */
  toolCallIds: readonly string[],
): ToolSpan[] {
  const spans: ToolSpan[] = [];
  let k = 0;
  for (let i = 0; i < ids.length; i++) {
    if (ids[i] !== markers.open) continue;
    const close = ids.indexOf(markers.close, i + 1);
    if (close < 0) break;
    let start = i + 1, end = close;
    if (ids[start] === markers.newline) start++;
    if (end > start && ids[end - 1] === markers.newline) end--;
    spans.push({ start, end, tool_call_id: toolCallIds[k++] ?? "" });
    i = close;
  }
  return spans;
}
