/**
 * A `Renderer` for families whose prompt is plain text with added tokens in it (every family
 * whose template is ChatML-like): the family writes text, this turns it into ids, deltas and
 * answers.
 *
 * - Ids: the text is cut before every turn-start token and each segment is encoded (and
 *   cached) on its own; a cut at an added token is token-safe (`segment_encoder.ts`).
 * - Delta: render a small synthetic conversation `[user, assistant(SENTINEL), ...newMessages]`
 *   with the generation prompt and no tools, find the sentinel, and take everything after the
 *   end-of-turn text that closes that assistant message: what a full render appends after the
 *   recorded turn. Cost follows the new messages (tools only shape the first turn in ChatML
 *   templates, so they are left out).
 * - Answer: render `[user, message, tool]`, cut off the generation prompt of `[user]` in front
 *   and everything after the message's end-of-turn text; or the family's own `answer` (MiniMax
 *   M2, Kimi K2.5, Laguna: the prompt opens reasoning the template writes back differently).
 *
 * @module
 */
import type { AssistantMessage, Message, ToolSpec } from "../../canonical/mod.ts";
import { SegmentEncoder } from "../segment_encoder.ts";
import type { TextTokenizer } from "../tokenizer.ts";
import { SpecialText } from "../special_text.ts";
import type {
  AnswerInPlace,
  Rendered,
  Renderer,
  RenderOptions,
  VisionPlaceholder,
} from "./family.ts";
import { findImageSpans, imagesOf, imageTokens, type VisionIds } from "./image_placeholders.ts";

/** Writes the prompt text for a conversation (pure; the family's template in code or Jinja). */
export interface TextRenderer {
  render(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    options: { addGenerationPrompt: boolean },
  ): string;
  /**
   * What the policy writes for `message` after the generation prompt, end-of-turn text included,
   * for a family that says it itself (a generation prompt that opens reasoning, which the
   * template's render of the message does not simply continue); without it, it is cut out of a
   * render.
   */
  answer?(message: AssistantMessage): string;
  /**
   * Where a full render also writes the generation prompt before `message` otherwise, in text:
   * the generation prompt's text from the first character it writes otherwise (`prompt`) and what
   * it writes from there through the answer's end (`rendered`); null when it keeps the prompt.
   * Without it, `TokenizedRenderer` finds ids that join across the prompt's end.
   */
  answerInPlace?(message: AssistantMessage): { prompt: string; rendered: string } | null;
}

const SENTINEL = "\u2063rollgate-delta-anchor\u2063";

/** How many leading ids `a` and `b` share. */
function commonPrefix(a: readonly number[], b: readonly number[]): number {
  let n = 0;
  while (n < a.length && a[n] === b[n]) n++;
  return n;
}

export class TokenizedRenderer implements Renderer {
  readonly #segments: SegmentEncoder;
  /** Special-token text in content: found, located, and (split mode) tokenized as text. */
  readonly #special: SpecialText;
  /** The split mode's segment encoder (its own cache), made on first use. */
  #splitSegments?: Promise<SegmentEncoder>;

  /**
   * @param endOfTurn text that closes an assistant turn (`<|im_end|>`); `""` for a format whose
   *   turn ends where the next message's marker begins (GLM): the delta then starts right after
   *   the sentinel message, with the next marker (and `answerText` is the family's to write)
   * @param turnStart text that starts every turn (`<|im_start|>`), or several: where ids are cut
   *   and cached
   * @param vision a vision family's placeholder and its ids: renders that hold images say where
   *   each image's tokens lie (`Rendered.images`)
   */
  constructor(
    readonly text: TextRenderer,
    readonly tokenizer: TextTokenizer,
    readonly endOfTurn: string,
    readonly turnStart: string | readonly string[],
    readonly vision?: { placeholder: VisionPlaceholder; ids: VisionIds },
  ) {
    this.#segments = new SegmentEncoder(tokenizer, turnStart);
    this.#special = new SpecialText(tokenizer.addedTokens);
  }

  /** Ids of rendered text (segment-cached). */
  encode(text: string): Promise<number[]> {
    return this.#segments.encode(text);
  }

  renderFull(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    addGenerationPrompt = true,
    options: RenderOptions = {},
  ): Promise<Rendered> {
    return this.#encode(
      messages,
      options,
      (ms) => this.text.render(ms, tools, { addGenerationPrompt }),
    );
  }

  renderDelta(
    newMessages: readonly Message[],
    _tools: readonly ToolSpec[] = [],
    options: RenderOptions = {},
  ): Promise<Rendered> {
    return this.#encode(newMessages, options, (ms) => this.deltaText(ms));
  }

  /**
   * Renders and tokenizes. Content without special-token text takes the plain path. With some, a
   * second render with that text escaped tells content from markup: in the default mode it only
   * locates the control ids content produced (the ids are the plain path's); in the split mode
   * its ids are the result.
   */
  async #encode(
    messages: readonly Message[],
    options: RenderOptions,
    render: (messages: readonly Message[]) => string,
  ): Promise<Rendered> {
    const rendered = await this.#encodeText(messages, options, render);
    const images = imagesOf(messages);
    if (images.length === 0) return rendered;
    if (!this.vision) throw new Error("this model family does not render images");
    const { placeholder, ids } = this.vision;
    const skip = new Set<number>();
    for (const hit of rendered.specialText) if (hit.position !== null) skip.add(hit.position);
    const counts = images.map((image) => imageTokens(placeholder, image));
    return { ...rendered, images: findImageSpans(rendered.ids, ids, counts, skip) };
  }

  async #encodeText(
    messages: readonly Message[],
    options: RenderOptions,
    render: (messages: readonly Message[]) => string,
  ): Promise<Rendered> {
    const hits = this.#special.find(messages);
    if (hits.length === 0) {
      const text = render(messages);
      return { text, ids: await this.encode(text), specialText: [] };
    }
    const escaped = render(this.#special.escape(messages));
    if (options.splitSpecialTokens) {
      this.#splitSegments ??= this.tokenizer.withoutAddedTokens().then((vocabulary) =>
        new SegmentEncoder(this.#special.splitEncoder(vocabulary), this.turnStart)
      );
      const ids = await (await this.#splitSegments).encode(escaped);
      return { text: this.#special.restore(escaped), ids, specialText: hits };
    }
    const text = render(messages);
    const ids = await this.encode(text);
    const positions = this.#special.locate(escaped, ids, hits);
    return { text, ids, specialText: hits.map((h, i) => ({ ...h, position: positions[i] })) };
  }

  /** The delta as text, starting right after the previous turn's end-of-turn text. */
  deltaText(newMessages: readonly Message[]): string {
    const synthetic: Message[] = [
      { role: "user", content: "." },
      { role: "assistant", content: SENTINEL },
      ...newMessages,
    ];
    const text = this.text.render(synthetic, [], { addGenerationPrompt: true });
    const anchor = text.indexOf(SENTINEL);
    const end = anchor < 0 ? -1 : text.indexOf(this.endOfTurn, anchor + SENTINEL.length);
    if (end < 0) {
      throw new Error("chat template does not close an assistant turn with " + this.endOfTurn);
    }
    return text.slice(end + this.endOfTurn.length);
  }

  async renderAnswer(message: AssistantMessage): Promise<number[]> {
    const text = this.answerText(message);
    return text === null ? [] : await this.encode(text);
  }

  /**
   * Where the generation prompt ends in text (not an added token), a full render may tokenize
   * that text together with the answer's first text: found by encoding the two together.
   */
  async renderAnswerInPlace(message: AssistantMessage): Promise<AnswerInPlace | null> {
    if (this.text.answerInPlace) {
      const inPlace = this.text.answerInPlace(message);
      if (inPlace === null) return null;
      const [prompt, rendered] = await Promise.all([
        this.encode(inPlace.prompt),
        this.encode(inPlace.rendered),
      ]);
      return { prompt, rendered };
    }
    const answer = this.answerText(message);
    if (answer === null) return null;
    const prefix = this.generationPromptText();
    const prompt = await this.encode(prefix);
    if (this.#special.isAdded(prompt[prompt.length - 1])) return null;
    // Ids never join across an added token: the answer's text up to its first one decides.
    const head = this.#special.firstIn(answer);
    const shared = commonPrefix(prompt, await this.encode(prefix + answer.slice(0, head)));
    if (shared === prompt.length) return null;
    const joined = await this.encode(prefix + answer);
    return { prompt: prompt.slice(shared), rendered: joined.slice(shared) };
  }

  /** The text of a one-message conversation's generation prompt (what answers follow). */
  generationPromptText(): string {
    // The same for every call (the template and its settings are this renderer's): rendered once.
    return this.#generationPrompt ??= this.text.render([{ role: "user", content: "." }], [], {
      addGenerationPrompt: true,
    });
  }

  #generationPrompt?: string;
  /** Each answer's text, for the two drift checks that ask for it in turn. */
  readonly #answers = new WeakMap<AssistantMessage, string | null>();

  /** What the template has the policy write for `message`, end-of-turn text included, or null. */
  answerText(message: AssistantMessage): string | null {
    if (this.#answers.has(message)) return this.#answers.get(message)!;
    const text = this.#answerText(message);
    this.#answers.set(message, text);
    return text;
  }

  #answerText(message: AssistantMessage): string | null {
    if (this.text.answer) return this.text.answer(message);
    const user: Message = { role: "user", content: "." };
    const prefix = this.generationPromptText();
    const text = this.text.render(
      [user, message, { role: "tool", content: ".", tool_call_id: "_" }],
      [],
      { addGenerationPrompt: false },
    );
    const end = text.indexOf(this.endOfTurn, prefix.length);
    if (!text.startsWith(prefix) || end < 0) return null;
    return text.slice(prefix.length, end + this.endOfTurn.length);
  }
}
