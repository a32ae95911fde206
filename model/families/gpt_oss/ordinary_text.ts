/**
 * Text encoded as text, as harmony encodes every piece of a message (tiktoken's
 * `encode_ordinary`): a Hugging Face tokenizer turns each spelling of an added token into that
 * token (`<|call|>` inside a JSON argument, `<|end|>` in a grep result), which would end the
 * message early for the model; harmony never does.
 *
 * The text is cut right after the `<|` of every added-token spelling and the pieces are encoded
 * one by one. That cut changes nothing else: in the o200k pre-tokenizer `<|` never joins the
 * letters after it (punctuation runs stop at a letter, and a letter word takes at most one
 * leading non-letter), so the cut falls on a boundary the tokenizer makes anyway, and no piece
 * spells a whole added token. The reference checks compare this with harmony's own encoding.
 *
 * Pieces repeat (headers, the system and developer messages of every rollout of a harness), so
 * their ids are cached by text once they come back (`IdCache.offer`).
 *
 * @module
 */
import { IdCache } from "../../id_cache.ts";
import type { TextTokenizer } from "../../tokenizer.ts";

/** Bytes of cached pieces (least recently used dropped first). */
const CACHE_BYTES = 16 * 1024 * 1024;

export class OrdinaryTextEncoder {
  readonly #spellings: RegExp | null;
  readonly #cache = new IdCache(CACHE_BYTES);

  /**
   * @param addedTokens the texts of the vocabulary's added tokens (`<|start|>`, …): each must be
   *   `<|` + a letter + … (every harmony token is), which the cut above relies on
   */
  constructor(private readonly tokenizer: TextTokenizer, addedTokens: readonly string[]) {
    for (const t of addedTokens) {
      if (!/^<\|\p{L}/u.test(t)) {
        throw new Error(`added token ${JSON.stringify(t)} is not of the form <|name…`);
      }
    }
    const escaped = addedTokens.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    this.#spellings = escaped.length > 0 ? new RegExp(escaped.join("|"), "g") : null;
  }

  /** Ids of `text`, added-token spellings included as plain text. */
  async encode(text: string): Promise<number[]> {
    if (text === "") return [];
    const hit = this.#cache.get(text);
    if (hit) return hit;
    const ids = (await Promise.all(this.#pieces(text).map((p) => this.tokenizer.encode(p)))).flat();
    this.#cache.offer(text, ids);
    return ids;
  }

  /** `text` cut after the `<|` of each added-token spelling. */
  #pieces(text: string): string[] {
    if (this.#spellings === null || !text.includes("<|")) return [text];
    const pieces: string[] = [];
    let from = 0;
    for (const match of text.matchAll(this.#spellings)) {
      pieces.push(text.slice(from, match.index + 2));
      from = match.index + 2;
    }
    pieces.push(text.slice(from));
    return pieces;
  }
}
