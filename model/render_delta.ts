/**
 * The text a chat template emits for new messages appended after a finished assistant turn.
 *
 * Method: render a small synthetic conversation `[user, assistant(SENTINEL)] + newMessages` with
 * the generation prompt, find the sentinel, and take everything after the end-of-turn marker that
 * closes that assistant message. The synthetic assistant has no reasoning and is not last, so the
 * template treats it as any earlier turn; the delta is what a full render would append after the
 * sampled tokens. Cost is proportional to the new messages, not to the history.
 *
 * @module
 */
import type { ChatTemplate } from "./chat_template.ts";
import type { Message } from "../canonical/mod.ts";
import { toTemplateMessages } from "./template_input.ts";

const SENTINEL = "\u2063rollgate-delta-anchor\u2063";

/**
 * @param endOfTurn the template's end-of-turn text (Qwen3: `<|im_end|>`)
 * @returns the delta text, starting right after the previous turn's end-of-turn token
 */
export function renderDelta(
  template: ChatTemplate,
  endOfTurn: string,
  newMessages: readonly Message[],
  kwargs?: Record<string, unknown>,
): string {
  const synthetic = [
    { role: "user", content: "." },
    { role: "assistant", content: SENTINEL },
    ...toTemplateMessages(newMessages, false),
  ];
  const text = template.render(synthetic, [], { addGenerationPrompt: true, kwargs });
  const anchor = text.indexOf(SENTINEL);
  const end = anchor < 0 ? -1 : text.indexOf(endOfTurn, anchor + SENTINEL.length);
  if (end < 0) {
    throw new Error("chat template does not close an assistant turn with " + endOfTurn);
  }
  return text.slice(end + endOfTurn.length);
}
