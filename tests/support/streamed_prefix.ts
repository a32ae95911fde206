/**
 * The streaming parser's guarantee, checked: output ids pushed in chunks never make the stream
 * send reasoning or text that the complete parse of the same ids contradicts.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { AssistantMessage, ToolSpec } from "../../canonical/mod.ts";
import type { PolicyModel } from "../../model/mod.ts";
import type { StreamDeltas } from "../../model/parsers/mod.ts";

export interface StreamCheck {
  /** Chunk sizes (default: one id at a time). */
  chunk?: () => number;
  tools?: readonly ToolSpec[];
  /** Prefixed to every assertion message. */
  label?: string;
}

/**
 * Feeds `ids` to a fresh streaming parser in chunks, asserting after every push that what was
 * streamed is a prefix of the complete parse, and that nothing more comes after the last push.
 *
 * @example
 * ```ts
 * import { streamAgainstParse } from "./streamed_prefix.ts";
 * import type { PolicyModel } from "../../model/mod.ts";
 * declare const model: PolicyModel;
 *
 * const { sent, final } = await streamAgainstParse(model, [9707, 151645]);
 * // sent.text is a prefix of final.content
 * ```
 */
export async function streamAgainstParse(
  model: PolicyModel,
  ids: readonly number[],
  { chunk = () => 1, tools = [], label = "" }: StreamCheck = {},
): Promise<{ sent: StreamDeltas; final: AssistantMessage }> {
  let n = 0;
  const final = (await model.parse(ids, () => `id${n++}`, tools)).message;
  const reasoning = final.reasoning_content ?? "";
  const parser = model.streamingParser();
  const sent = { reasoning: "", text: "" };
  for (let i = 0; i < ids.length;) {
    const size = Math.min(chunk(), ids.length - i);
    const d = await parser.push(ids.slice(i, i + size));
    i += size;
    sent.reasoning += d.reasoning;
    sent.text += d.text;
    const at = `${label} after ${i}/${ids.length} ids ${JSON.stringify(ids)}`;
    assert.ok(
      reasoning.startsWith(sent.reasoning),
      `reasoning ${JSON.stringify(sent.reasoning)} vs ${JSON.stringify(reasoning)} ${at}`,
    );
    assert.ok(
      final.content.startsWith(sent.text),
      `text ${JSON.stringify(sent.text)} vs ${JSON.stringify(final.content)} ${at}`,
    );
  }
  assert.deepEqual(await parser.push([]), { reasoning: "", text: "" }, `${label} after the end`);
  return { sent, final };
}
