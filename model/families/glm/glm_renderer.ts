/**
 * GLM text → ids, deltas and answers. A GLM assistant turn has no closing token: it ends where
 * the next message's marker begins, and the policy stops by sampling that marker. So the delta
 * after a recorded turn starts with the first new message's marker (`TokenizedRenderer` with an
 * empty end-of-turn text; the turn path shares that marker with an output that sampled it, see
 * `turn_join.ts`), and an answer is what follows the generation prompt up to the marker that the
 * policy stops on: `<|observation|>` after tool calls, `<|user|>` otherwise.
 *
 * @module
 */
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import type { DeltaHistory, Rendered, RenderOptions } from "../family.ts";
import { resultsInCallOrder } from "../results_in_call_order.ts";
import { toTemplateMessages } from "../../template_input.ts";
import type { TextTokenizer } from "../../tokenizer.ts";
import { TokenizedRenderer } from "../text_renderer.ts";
import type { AnswerInPlace } from "../family.ts";
import type { GlmTextRenderer } from "./render.ts";

export class GlmRenderer extends TokenizedRenderer {
  constructor(readonly glm: GlmTextRenderer, tokenizer: TextTokenizer) {
    // Segments are cut (and cached) before every assistant turn.
    super(glm, tokenizer, "", "<|assistant|>");
  }

  /** GLM-5.3: the results of all of a turn's calls in their order, as a full render writes them. */
  override renderDelta(
    newMessages: readonly Message[],
    tools: readonly ToolSpec[] = [],
    options: RenderOptions = {},
    history?: DeltaHistory,
  ): Promise<Rendered> {
    const ordered = this.glm.options.layout === "glm-5.3"
      ? resultsInCallOrder(newMessages, history, "one-to-one")
      : newMessages;
    return super.renderDelta(ordered, tools, options);
  }

  /**
   * What the policy writes for `message` after the generation prompt, stop marker included, or
   * null when the template's render of it does not continue the generation prompt.
   */
  override answerText(message: AssistantMessage): string | null {
    const body = this.glm.assistantBody(toTemplateMessages([message])[0], true);
    const tail = this.glm.generationTail;
    // GLM-5: the prompt opened `<think>`; an answer without reasoning closes it at once.
    const answer = body.startsWith(tail)
      ? body.slice(tail.length)
      : tail === "<think>" && body.startsWith("</think>")
      ? body
      : null;
    if (answer === null) return null;
    return answer + (message.tool_calls?.length ? "<|observation|>" : "<|user|>");
  }

  /**
   * GLM-5 writes an answer without reasoning as `</think>…` in history: a full render drops the
   * `<think>` the generation prompt opened (GLM-5.1 keeps `<think></think>` on the last turn).
   */
  override async renderAnswerInPlace(message: AssistantMessage): Promise<AnswerInPlace | null> {
    const tail = this.glm.generationTail;
    const body = this.glm.assistantBody(toTemplateMessages([message])[0], true);
    const answer = this.answerText(message);
    if (tail !== "<think>" || body.startsWith(tail) || answer === null) return null;
    const [prompt, rendered] = await Promise.all([this.encode(tail), this.encode(answer)]);
    return { prompt, rendered };
  }
}
