/**
 * The `engine` family's renderer: every prompt is the engine's full render of the conversation
 * (its chat template, its tokenizer). There is no delta: the turn path renders each turn's whole
 * history and checks that the ids extend the previous turn's prompt and output
 * (`ChatFormat.rendersInFull`). Special-token text in content is found here (the engine
 * tokenizes it as its tokenizer does, into control ids) but not located in the ids.
 *
 * @module
 */
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { SpecialText } from "../../special_text.ts";
import { FamilyError, type Rendered, type Renderer, type RenderOptions } from "../family.ts";
import type { EngineRendering } from "../engine_rendering.ts";

export class EngineRenderer implements Renderer {
  constructor(
    readonly engine: EngineRendering,
    readonly templateKwargs: Readonly<Record<string, unknown>>,
    readonly special: SpecialText,
  ) {}

  async renderFull(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    addGenerationPrompt = true,
    options: RenderOptions = {},
  ): Promise<Rendered> {
    if (options.splitSpecialTokens) {
      throw new FamilyError(
        "split_special_tokens is not available with --model-family engine: the engine " +
          "tokenizes content itself (special-token text becomes control ids)",
      );
    }
    const ids = await this.engine.render({
      messages,
      tools,
      templateKwargs: this.templateKwargs,
      addGenerationPrompt,
    });
    // Only ids come back: the text is the engine's.
    return { text: "", ids, specialText: this.special.find(messages) };
  }

  renderDelta(): Promise<Rendered> {
    return Promise.reject(
      new FamilyError("the engine family renders every prompt in full, never a delta"),
    );
  }

  /** The engine does not say how it would write an answer: drift shows in the next render. */
  renderAnswer(_message: AssistantMessage): Promise<number[]> {
    return Promise.resolve([]);
  }
}
