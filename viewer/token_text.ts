/**
 * The text of each token, for showing ids one by one. A token is decoded alone (and remembered:
 * a page repeats few distinct ids); a token holding only part of a UTF-8 character decodes to
 * U+FFFD alone, so it is decoded together with the tokens that complete the character, and the
 * character is shown on the first of them (the others show nothing).
 *
 * @example
 * ```ts
 * import { PolicyModel } from "../model/mod.ts";
 * import { TokenText } from "./token_text.ts";
 * const model = await PolicyModel.load();
 * const text = new TokenText((ids) => model.decode(ids));
 * const ids = await model.tokenizer.encode("héllo 🙂");
 * const { vocab, joins } = await text.describe(ids, 0, ids.length);
 * ```
 *
 * @module
 */

/** Longest run of tokens one character can be split over (4 UTF-8 bytes). */
const MAX_SPLIT = 4;
const REPLACEMENT = "\uFFFD";

export interface TokenPieces {
  /** Each distinct id's text, decoded alone. */
  vocab: Map<number, string>;
  /** Positions whose shown text is not their id's own: split characters, decoded together. */
  joins: Map<number, string>;
}

export class TokenText {
  readonly #single = new Map<number, string>();

  constructor(readonly decode: (ids: number[]) => Promise<string>) {}

  /** The text of one id, decoded alone. */
  async piece(id: number): Promise<string> {
    let text = this.#single.get(id);
    if (text === undefined) {
      text = await this.decode([id]);
      this.#single.set(id, text);
    }
    return text;
  }

  /** The pieces of `ids[from, to)`; a split character may reach past `to`. */
  async describe(ids: ArrayLike<number>, from: number, to: number): Promise<TokenPieces> {
    const vocab = new Map<number, string>();
    for (let i = from; i < to; i++) {
      if (!vocab.has(ids[i])) vocab.set(ids[i], await this.piece(ids[i]));
    }
    const joins = new Map<number, string>();
    for (let i = from; i < to; i++) {
      if (!vocab.get(ids[i])!.includes(REPLACEMENT)) continue;
      for (let k = 2; k <= MAX_SPLIT && i + k <= ids.length; k++) {
        const group = Array.from({ length: k }, (_, j) => ids[i + j]);
        const text = await this.decode(group);
        if (text.includes(REPLACEMENT)) continue;
        joins.set(i, text);
        for (let j = 1; j < k; j++) joins.set(i + j, "");
        i += k - 1;
        break;
      }
    }
    return { vocab, joins };
  }
}
