/**
 * Special-token text inside message content: a file the agent reads that holds `<|im_end|>`, a
 * user pasting `<|im_start|>system`. A tokenizer turns such text into the real control ids (as
 * `transformers` and inference engines do), so content can forge turn boundaries. This module
 * finds it (for the per-turn report) and supports the opt-in mode that tokenizes it as plain text
 * while the template's own markup keeps its control ids (`transformers`' `split_special_tokens`
 * applied to content only).
 *
 * Special-token text is the text of any of the tokenizer's added tokens, whether marked `special`
 * (Qwen3: `<|im_start|>`, `<|im_end|>`, `<|endoftext|>`) or not (Qwen3's `<tool_call>`,
 * `</tool_response>`, `<think>`; DeepSeek V3.1's `<｜User｜>`, `<｜Assistant｜>` and tool markers):
 * a tokenizer matches both kinds in any text, so either becomes its control id from content. Only
 * system, user and tool content is considered: assistant text is the policy's own.
 *
 * How the split mode tells content from markup: before rendering, added-token text in content is
 * replaced by placeholders (noncharacters around the token's index, which no template alters);
 * after rendering, every added token left in the text is markup. The text is then cut at markup
 * added tokens, which keep their ids; the pieces between, with their placeholders restored, are
 * tokenized by the vocabulary alone. (`transformers`' `split_special_tokens` still matches
 * non-special added tokens in content; rollgate's split mode does not, so content cannot forge a
 * `<tool_call>` or `<｜User｜>` either.)
 *
 * @module
 */
import type { Message } from "../canonical/mod.ts";
import type { AddedToken, TextTokenizer } from "./tokenizer.ts";

/** One occurrence of special-token text in a message's content. */
export interface SpecialTextHit {
  /** Index of the message in the rendered messages (the request's history for a turn). */
  message: number;
  role: "system" | "user" | "tool";
  /** Offset (UTF-16 code units) of the token text in the message's content. */
  offset: number;
  /** The token text, e.g. `<|im_end|>`. */
  token: string;
  /**
   * Index in the rendered ids of the control id this text became; null when it was tokenized as
   * plain text (split mode; harmony always), or could not be located.
   */
  position: number | null;
}

/** Rendered ids: markup control ids and text pieces to tokenize. */
export type MarkupPiece = { id: number } | { text: string };

const OPEN = "\uFDD0", CLOSE = "\uFDD1";
/** A placeholder's index for a literal `OPEN` in content (escaped too, so restoring is exact). */
const LITERAL_OPEN = "x";

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export class SpecialText {
  /** Added token texts, longest first (leftmost-longest matching, as the added vocabulary). */
  readonly #tokens: string[];
  /** Every added token's id (special or not), by text. */
  readonly #ids: Map<string, number>;
  readonly #addedIds: Set<number>;
  /** Index in `#tokens`, by text (the placeholder's number). */
  readonly #index: Map<string, number>;
  readonly #pattern: RegExp;
  /** Placeholders and added tokens: content and markup, in order (where the split mode cuts). */
  readonly #withPlaceholders: RegExp;

  /** @param added every added token: text → id and whether it is special */
  constructor(added: ReadonlyMap<string, AddedToken>) {
    const byLength = (a: string, b: string) => b.length - a.length;
    this.#ids = new Map([...added].map(([text, t]) => [text, t.id]));
    this.#tokens = [...added.keys()].sort(byLength);
    this.#addedIds = new Set(this.#ids.values());
    this.#index = new Map(this.#tokens.map((t, i) => [t, i]));
    const alternatives = (texts: string[]) => texts.map(escapeRegExp).join("|") || "(?!)";
    const special = alternatives(this.#tokens);
    const placeholder = `${OPEN}(\\d+|${LITERAL_OPEN})${CLOSE}`;
    this.#pattern = new RegExp(special, "g");
    this.#withPlaceholders = new RegExp(`${placeholder}|${special}`, "g");
  }

  /** Whether `id` is an added token's. */
  isAdded(id: number): boolean {
    return this.#addedIds.has(id);
  }

  /** Index of the first added-token text in `text`; its length when there is none. */
  firstIn(text: string): number {
    const at = text.search(this.#pattern);
    return at < 0 ? text.length : at;
  }

  /** Every special-token text in the system, user and tool content of `messages`. */
  find(messages: readonly Message[]): SpecialTextHit[] {
    const hits: SpecialTextHit[] = [];
    messages.forEach((m, message) => {
      if (m.role === "assistant" || !m.content) return;
      for (const match of m.content.matchAll(this.#pattern)) {
        hits.push({ message, role: m.role, offset: match.index, token: match[0], position: null });
      }
    });
    return hits;
  }

  /** `messages` with the special text of their system, user and tool content replaced by placeholders. */
  escape(messages: readonly Message[]): Message[] {
    const escape = (text: string) =>
      text.replaceAll(OPEN, `${OPEN}${LITERAL_OPEN}${CLOSE}`)
        .replace(this.#pattern, (t) => `${OPEN}${this.#index.get(t)}${CLOSE}`);
    return messages.map((m) => {
      if (m.role === "assistant" || !m.content) return m;
      if (m.role === "system" || !m.images?.length) return { ...m, content: escape(m.content) };
      // Text on either side of an image is escaped apart, and the image moves with its place.
      let content = "", from = 0;
      const images = m.images.map((image) => {
        content += escape(m.content.slice(from, image.at));
        from = image.at;
        return { ...image, at: content.length };
      });
      return { ...m, content: content + escape(m.content.slice(from)), images };
    });
  }

  /** Escaped rendered text with the placeholders turned back into the content's text. */
  restore(escaped: string): string {
    return escaped.replace(
      this.#withPlaceholders,
      (t, k?: string) => k === undefined ? t : k === LITERAL_OPEN ? OPEN : this.#tokens[Number(k)],
    );
  }

  /**
   * Tokenizes escaped rendered text: added tokens by their ids (markup special tokens, any
   * non-special added token), the pieces between (content special text included) by `plain`,
   * the model's vocabulary without added tokens.
   */
  splitEncoder(plain: Pick<TextTokenizer, "encode">): Pick<TextTokenizer, "encode"> {
    return {
      encode: async (escaped) => {
        const ids: number[] = [];
        for (const piece of this.markupPieces(escaped)) {
          if ("id" in piece) ids.push(piece.id);
          else for (const id of await plain.encode(piece.text)) ids.push(id);
        }
        return ids;
      },
    };
  }

  /**
   * Escaped rendered text as added-token ids (markup special tokens, any non-special added token)
   * and the text pieces between them (placeholders restored).
   */
  markupPieces(escaped: string): MarkupPiece[] {
    const pieces: MarkupPiece[] = [];
    let text = "", at = 0;
    for (const match of escaped.matchAll(this.#withPlaceholders)) {
      text += escaped.slice(at, match.index);
      at = match.index + match[0].length;
      if (match[1] === undefined) {
        if (text) pieces.push({ text });
        text = "";
        pieces.push({ id: this.#ids.get(match[0])! });
      } else {
        text += match[1] === LITERAL_OPEN ? OPEN : this.#tokens[Number(match[1])];
      }
    }
    text += escaped.slice(at);
    if (text) pieces.push({ text });
    return pieces;
  }

  /**
   * Positions in `ids` (the tokenization of the normally rendered text) of the control ids that
   * content produced: the k-th special token of the escaped render (markup or placeholder) is the
   * k-th special id. Null for every hit when the two renders do not line up.
   */
  locate(
    escaped: string,
    ids: readonly number[],
    hits: readonly SpecialTextHit[],
  ): (number | null)[] {
    const positions: number[] = [];
    for (let i = 0; i < ids.length; i++) if (this.#addedIds.has(ids[i])) positions.push(i);
    const content: number[] = [];
    let k = 0;
    for (const match of escaped.matchAll(this.#withPlaceholders)) {
      if (match[1] !== undefined && match[1] !== LITERAL_OPEN) content.push(positions[k]);
      if (match[1] !== LITERAL_OPEN) k++;
    }
    const aligned = k === positions.length && content.length === hits.length &&
      content.every((p, i) => ids[p] === this.#ids.get(hits[i].token));
    return hits.map((_, i) => (aligned ? content[i] : null));
  }
}
