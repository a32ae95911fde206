/**
 * Tokenizing rendered chat text in segments cut before every turn-start token.
 *
 * A cut at an added-token edge is token-safe (added tokens are split out before normalization
 * and pre-tokenization; measured 0 differences in `reference/tokenizers-and-templates.md` §5),
 * a cut inside text is not. Segments repeat across turns and rollouts (system prompt + tools are
 * identical for every rollout of a harness), so their ids are cached by text once they come back
 * (`IdCache.offer`).
 *
 * @module
 */
import v8 from "node:v8";
import vm from "node:vm";
import { EncodeLane, LONG_ENCODES } from "./encode_lane.ts";
import { IdCache } from "./id_cache.ts";
import { chunkText, cutsAreSafe } from "./text_cuts.ts";
import type { TextTokenizer } from "./tokenizer.ts";

/** Segments longer than this are not cached (they rarely repeat and would pin memory). */
const MAX_CACHED_LENGTH = 64 * 1024;

/**
 * Bytes of cached segments. What repeats is what every rollout of a harness or task renders
 * first (system prompt, tools, task: tens of kilobytes each); a turn's own new segments do not
 * come back, since later turns render only their delta, so they are not kept.
 */
export const SEGMENT_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * Text at least this long (~16k tokens: a cold first turn, a huge tool output) has its uncached
 * segments tokenized one after another in the process's lane for long encodes
 * ({@link LONG_ENCODES}) rather than all at once, so it never takes every core from warm turns.
 * The lane is taken one slice of about {@link PIECE_LENGTH} characters at a time (a run of
 * segments, or a piece of a long one) and queued for again after each: long texts share it in
 * turn, so a 32 MB `count_tokens` holds another rollout's cold turn up by one slice per slice of
 * its own, not by its whole length.
 */
export const LONG_TEXT = 64 * 1024;

/** Characters per piece when a long segment is tokenized piece by piece (`text_cuts.ts`). */
const PIECE_LENGTH = 16 * 1024;

/** Characters of long text tokenized between two collections (see `collectGarbage`). */
const COLLECT_EVERY = 2_000_000;

/**
 * A full garbage collection. The native tokenizer's encodings (offsets and token strings, ~100
 * bytes an id) are freed only when V8 collects their small JS wrappers, and V8 does not know
 * they are large: megabytes of text would leave hundreds of megabytes waiting. So long text asks
 * for a collection every few megabytes (tens of milliseconds each).
 */
const collectGarbage: () => void = (() => {
  try {
    v8.setFlagsFromString("--expose-gc");
    return vm.runInNewContext("gc") as () => void;
  } catch {
    return () => {};
  }
})();

export interface SegmentEncoderOptions {
  /** Bound of the segment cache in bytes (default {@link SEGMENT_CACHE_BYTES}). */
  cacheBytes?: number;
  /** Where long texts are tokenized (default the process's {@link LONG_ENCODES}). */
  longLane?: EncodeLane;
}

export class SegmentEncoder {
  readonly #cache: IdCache;
  readonly #longLane: EncodeLane;
  readonly #splitter: RegExp;
  /** Whether this tokenizer may be cut at the safe places (checked on the first long text). */
  #cutsSafe?: Promise<boolean>;

  constructor(
    private readonly tokenizer: Pick<TextTokenizer, "encode">,
    /**
     * The token text that starts a turn, e.g. `<|im_start|>`, or several (DeepSeek: `<｜User｜>`
     * and `<｜tool▁output▁begin｜>`): segments are cut before each.
     */
    readonly turnStart: string | readonly string[],
    options: SegmentEncoderOptions = {},
  ) {
    this.#cache = new IdCache(options.cacheBytes ?? SEGMENT_CACHE_BYTES);
    this.#longLane = options.longLane ?? LONG_ENCODES;
    const starts = typeof turnStart === "string" ? [turnStart] : turnStart;
    const escaped = starts.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    this.#splitter = new RegExp(`(?=${escaped.join("|")})`);
  }

  /** Ids of `text`, equal to `tokenizer.encode(text)` when cuts before turn starts are safe. */
  async encode(text: string): Promise<number[]> {
    const segments = text.split(this.#splitter).filter((s) => s.length > 0);
    const parts = segments.map((s) =>
      s.length > MAX_CACHED_LENGTH ? undefined : this.#cache.get(s)
    );
    if (text.length < LONG_TEXT) {
      return (await Promise.all(segments.map((s, i) => parts[i] ?? this.#encodeSegment(s)))).flat();
    }
    // Slices of about one piece each: runs of short uncached segments, or a long segment's pieces.
    const lane = this.#longLane;
    for (let i = 0; i < segments.length;) {
      if (parts[i] !== undefined) {
        i++;
      } else if (segments[i].length > MAX_CACHED_LENGTH) {
        parts[i] = await this.#encodeLong(segments[i], lane);
        i++;
      } else {
        const from = i;
        let chars = 0;
        while (
          i < segments.length && parts[i] === undefined && chars < PIECE_LENGTH &&
          segments[i].length <= MAX_CACHED_LENGTH
        ) chars += segments[i++].length;
        await lane.run(async () => {
          for (let k = from; k < i; k++) parts[k] = await this.#encodeSegment(segments[k]);
        });
      }
    }
    return (parts as number[][]).flat();
  }

  /** A segment not in the cache. */
  async #encodeSegment(segment: string): Promise<number[]> {
    if (segment.length > MAX_CACHED_LENGTH) return await this.#encodeLong(segment);
    const ids = await this.tokenizer.encode(segment);
    this.#cache.offer(segment, ids);
    return ids;
  }

  /**
   * A long segment, piece by piece when allowed, so only one piece's encoding is alive at once
   * and other long texts get the lane between two pieces.
   */
  async #encodeLong(segment: string, lane?: EncodeLane): Promise<number[]> {
    const encode = (text: string) =>
      lane ? lane.run(() => this.tokenizer.encode(text)) : this.tokenizer.encode(text);
    this.#cutsSafe ??= cutsAreSafe((text) => this.tokenizer.encode(text));
    if (!await this.#cutsSafe) return await encode(segment);
    const ids: number[] = [];
    let sinceCollection = 0;
    for (const piece of chunkText(segment, PIECE_LENGTH)) {
      const part = await encode(piece);
      for (let i = 0; i < part.length; i++) ids.push(part[i]);
      sinceCollection += piece.length;
      if (sinceCollection >= COLLECT_EVERY) {
        collectGarbage();
        sinceCollection = 0;
      }
    }
    if (sinceCollection > 0 && segment.length >= COLLECT_EVERY) collectGarbage();
    return ids;
  }
}
