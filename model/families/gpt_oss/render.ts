/**
 * Harmony messages → ids, the way OpenAI's harmony renderer writes them: every message is
 * `<|start|>` AUTHOR [` to=RECIPIENT`] [`<|channel|>` CHANNEL] [` ` `<|constrain|>` TYPE]
 * `<|message|>` CONTENT, closed by `<|call|>` (an assistant message to a tool) or `<|end|>`.
 * Each piece of text is encoded on its own, as plain text (`ordinary_text.ts`); special tokens
 * are placed as ids.
 *
 * - `renderFull`: the conversation (`conversation.ts`), then `<|start|>assistant` as the
 *   generation prompt; the policy writes the channel itself.
 * - `renderDelta`: only the new messages (tool results, user and developer messages) and the
 *   generation prompt; a tool result's author comes from the message or the call it answers.
 * - Special-token text in system, user and tool content (`<|end|>` in a grep result) is reported
 *   (`Rendered.specialText`, found by `special_text.ts` as for every family) and, as harmony
 *   does, always tokenized as plain text: the default already is what `splitSpecialTokens` asks
 *   for, so the option changes nothing here and no hit has a control-id position.
 * - `renderAnswer`: the answer as gpt-oss writes it after the generation prompt:
 *   `<|channel|>analysis<|message|>…<|end|>`, then `<|start|>assistant` and the next message: a
 *   call as `<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>`,
 *   the final answer as `<|channel|>final<|message|>…<|return|>`. Text between two special
 *   tokens is one piece. History writes the same answer differently (`<|end|>` for `<|return|>`,
 *   the recipient before the channel, older analysis dropped): the family's known
 *   non-prefix-stable points; the gateway keeps the sampled ids.
 *
 * @module
 */
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import type { SpecialText } from "../../special_text.ts";
import type { DeltaHistory, Rendered, Renderer, RenderOptions } from "../family.ts";
import {
  answerMessages,
  CONSTRAIN,
  harmonyConversation,
  type HarmonyMessage,
  harmonyMessages,
  type HarmonyPreamble,
} from "./conversation.ts";
import type { OrdinaryTextEncoder } from "./ordinary_text.ts";

/** Ids of harmony's special tokens. */
export interface HarmonyIds {
  start: number;
  end: number;
  message: number;
  channel: number;
  constrain: number;
  /** `<|return|>`: the end of the final answer, when sampled. */
  return: number;
  call: number;
}

/** Token texts by field of `HarmonyIds`. */
export const HARMONY_TOKENS: Readonly<Record<keyof HarmonyIds, string>> = {
  start: "<|start|>",
  end: "<|end|>",
  message: "<|message|>",
  channel: "<|channel|>",
  constrain: "<|constrain|>",
  return: "<|return|>",
  call: "<|call|>",
};

/** A special token's id, or a piece of text; `output` marks a tool result's text. */
type Piece = number | string | { output: string };

const NO_HISTORY: DeltaHistory = { toolCall: () => undefined };

export class HarmonyRenderer implements Renderer {
  readonly #names: Map<number, string>;

  /**
   * @param special finds special-token text in content (for the report; harmony's encoding never
   *   turns it into control ids)
   */
  constructor(
    readonly ids: HarmonyIds,
    private readonly text: OrdinaryTextEncoder,
    readonly preamble: HarmonyPreamble,
    private readonly special: SpecialText,
  ) {
    this.#names = new Map(
      (Object.keys(HARMONY_TOKENS) as (keyof HarmonyIds)[]).map((k) => [ids[k], HARMONY_TOKENS[k]]),
    );
  }

  /** Pieces of a content type: the `<|constrain|>` marker is a token of its own. */
  #contentType(type: string, out: Piece[]): void {
    if (type.startsWith(CONSTRAIN)) {
      out.push(" ", this.ids.constrain);
      if (type.length > CONSTRAIN.length) out.push(type.slice(CONSTRAIN.length));
    } else {
      out.push(` ${type}`);
    }
  }

  /** Pieces of one message in history form. */
  #message(m: HarmonyMessage, out: Piece[]): void {
    out.push(this.ids.start, m.author);
    if (m.recipient !== undefined && m.recipient !== "all") out.push(` to=${m.recipient}`);
    if (m.channel !== undefined) out.push(this.ids.channel, m.channel);
    if (m.contentType !== undefined) this.#contentType(m.contentType, out);
    out.push(this.ids.message, m.role === "tool" ? { output: m.content } : m.content);
    out.push(m.role === "assistant" && m.recipient !== undefined ? this.ids.call : this.ids.end);
  }

  /** Ids and text of `pieces`; `content` is the messages whose special-token text is reported. */
  async #encode(pieces: readonly Piece[], content: readonly Message[] = []): Promise<Rendered> {
    const parts = await Promise.all(
      pieces.map((p) =>
        typeof p === "number" ? [p] : this.text.encode(typeof p === "string" ? p : p.output)
      ),
    );
    const ids: number[] = [];
    const toolOutputs: { start: number; end: number }[] = [];
    let text = "";
    pieces.forEach((p, i) => {
      if (typeof p === "object") {
        toolOutputs.push({ start: ids.length, end: ids.length + parts[i].length });
      }
      for (const id of parts[i]) ids.push(id);
      text += typeof p === "number" ? this.#names.get(p)! : typeof p === "string" ? p : p.output;
    });
    return { text, ids, specialText: this.special.find(content), toolOutputs };
  }

  renderFull(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    addGenerationPrompt = true,
    _options?: RenderOptions,
  ): Promise<Rendered> {
    const pieces: Piece[] = [];
    for (const m of harmonyConversation(messages, tools, this.preamble)) this.#message(m, pieces);
    if (addGenerationPrompt) pieces.push(this.ids.start, "assistant");
    return this.#encode(pieces, messages);
  }

  renderDelta(
    newMessages: readonly Message[],
    _tools: readonly ToolSpec[],
    _options?: RenderOptions,
    history: DeltaHistory = NO_HISTORY,
  ): Promise<Rendered> {
    const pieces: Piece[] = [];
    for (const m of harmonyMessages(newMessages, history)) this.#message(m, pieces);
    pieces.push(this.ids.start, "assistant");
    return this.#encode(pieces, newMessages);
  }

  async renderAnswer(message: AssistantMessage): Promise<number[]> {
    const pieces: Piece[] = [];
    answerMessages(message).forEach((m, i) => {
      if (i > 0) pieces.push(this.ids.start, "assistant");
      const to = m.recipient === undefined ? "" : ` to=${m.recipient}`;
      if (m.contentType?.startsWith(CONSTRAIN)) {
        pieces.push(this.ids.channel, `${m.channel}${to} `, this.ids.constrain);
        if (m.contentType.length > CONSTRAIN.length) {
          pieces.push(m.contentType.slice(CONSTRAIN.length));
        }
      } else {
        const type = m.contentType === undefined ? "" : ` ${m.contentType}`;
        pieces.push(this.ids.channel, `${m.channel}${to}${type}`);
      }
      pieces.push(this.ids.message, m.content);
      pieces.push(
        m.recipient !== undefined
          ? this.ids.call
          : m.channel === "final"
          ? this.ids.return
          : this.ids.end,
      );
    });
    return (await this.#encode(pieces)).ids;
  }
}
