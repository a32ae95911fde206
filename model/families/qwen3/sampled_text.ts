/**
 * The text a Qwen3 policy samples for an assistant message: what the chat template renders for it
 * as the last assistant turn (after `<|im_start|>assistant\n`), `<|im_end|>` included. The inverse
 * of `HermesParser.parse`; scripted policies and tests tokenize it to get real sampled ids.
 *
 * @example
 * ```ts
 * import { qwen3SampledText } from "./sampled_text.ts";
 *
 * qwen3SampledText({ role: "assistant", content: "Hi.", reasoning_content: "Greet." });
 * // "<think>\nGreet.\n</think>\n\nHi.<|im_end|>"
 * ```
 *
 * @module
 */
import type { AssistantMessage } from "../../../canonical/mod.ts";

export function qwen3SampledText(message: AssistantMessage): string {
  const content = message.content;
  let text = `<think>\n${message.reasoning_content ?? ""}\n</think>\n\n${content}`;
  (message.tool_calls ?? []).forEach((call, i) => {
    if (i > 0 || content) text += "\n";
    text += `<tool_call>\n{"name": ${
      JSON.stringify(call.name)
    }, "arguments": ${call.arguments}}\n</tool_call>`;
  });
  return text + "<|im_end|>";
}
