/**
 * Tokenizing rendered chat text in segments cut before every turn-start token.
 *
 * A cut at an added-token edge is token-safe (added tokens are split out before normalization
 * and pre-tokenization; measured 0 differences in `reference/tokenizers-and-templates.md` §5),
 * a cut inside text is not. Segments repeat across turns and rollouts (system prompt + tools are
 * identical for every rollout of a harness), so their ids are cached by text.
 *
 * @module
 */
import type { TextTokenizer } from "./tokenizer.ts";

export class SegmentEncoder {
  readonly #cache = new Map<string, number[]>();
  readonly #splitter: RegExp;

  constructor(
    private readonly tokenizer: Pick<TextTokenizer, "encode">,
    /** The token text that starts a turn, e.g. `<|im_start|>`. */
    readonly turnStart: string,
    private readonly maxEntries = 4096,
  ) {
    this.#splitter = new RegExp(`(?=${turnStart.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")})`);
  }

  /** Ids of `text`, equal to `tokenizer.encode(text)` when cuts before turn starts are safe. */
  async encode(text: string): Promise<number[]> {
    const segments = text.split(this.#splitter).filter((s) => s.length > 0);
    const parts = await Promise.all(segments.map((s) => this.#encodeSegment(s)));
    return parts.flat();
  }

  async #encodeSegment(segment: string): Promise<number[]> {
    const hit = this.#cache.get(segment);
    if (hit) {
      // Refresh recency: Map iteration order is insertion order.
      this.#cache.delete(segment);
      this.#cache.set(segment, hit);
      return hit;
    }
    const ids = await this.tokenizer.encode(segment);
    this.#cache.set(segment, ids);
    if (this.#cache.size > this.maxEntries) {
      this.#cache.delete(this.#cache.keys().next().value!);
    }
    return ids;
  }
}
