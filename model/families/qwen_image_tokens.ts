/**
 * How many image tokens a Qwen-VL image processor (`Qwen2VLImageProcessor`, which Qwen3-VL's
 * `Qwen3VLProcessor` uses) gives an image of a size, without its pixels:
 *
 * 1. Smart resize: each side rounded to a multiple of `patch × merge` (Python's `round`, halves to
 *    even); when the area is above `max_pixels` both sides shrink by `sqrt(area / max)` and round
 *    down, when below `min_pixels` grow by `sqrt(min / area)` and round up (never under one
 *    factor). An aspect ratio above 200 is refused, as the processor refuses it.
 * 2. Patches: `(height / patch) × (width / patch)` (one temporal patch for an image).
 * 3. Merge: every `merge × merge` patches are one token.
 *
 * The same float operations in the same order as `transformers`' `smart_resize`, so the counts
 * are equal for every size (`tests/families/qwen3_vl_images_test.ts` checks against the
 * processor).
 *
 * @module
 */
import type { ImageSize, VisionImageError } from "./family.ts";

/** The settings the count needs, as `preprocessor_config.json` names them. */
export interface QwenImageProcessor {
  patchSize: number;
  mergeSize: number;
  /** `size.shortest_edge` (or the older `min_pixels`): the least area after resizing. */
  minPixels: number;
  /** `size.longest_edge` (or `max_pixels`): the largest area after resizing. */
  maxPixels: number;
}

/**
 * Qwen3-VL Instruct's published `preprocessor_config.json` (4B, 8B, 30B-A3B): `patch_size` 16,
 * `merge_size` 2, `temporal_patch_size` 2, `size` `{shortest_edge: 65536, longest_edge:
 * 16777216}` (256² to 4096² pixels), image processor `Qwen2VLImageProcessorFast`.
 */
export const QWEN3_VL_IMAGE_PROCESSOR: QwenImageProcessor = {
  patchSize: 16,
  mergeSize: 2,
  minPixels: 65536,
  maxPixels: 16777216,
};

/** The largest ratio of the long side to the short one the processor takes. */
const MAX_RATIO = 200;

/** The model directory's settings over `defaults` (a directory without the file keeps them). */
export function qwenImageProcessor(
  config: Record<string, unknown> | undefined,
  defaults: QwenImageProcessor,
): QwenImageProcessor {
  if (!config) return defaults;
  const size = (config.size ?? {}) as Record<string, unknown>;
  const number = (...values: unknown[]) => values.find((v) => typeof v === "number") as number;
  return {
    patchSize: number(config.patch_size, defaults.patchSize),
    mergeSize: number(config.merge_size, defaults.mergeSize),
    minPixels: number(size.shortest_edge, config.min_pixels, defaults.minPixels),
    maxPixels: number(size.longest_edge, config.max_pixels, defaults.maxPixels),
  };
}

/** Python's `round(n / factor)` for integers: the nearest integer, halves to even. */
function roundHalfEven(n: number, factor: number): number {
  const q = Math.floor(n / factor), twice = 2 * (n - q * factor);
  return twice > factor || (twice === factor && q % 2 === 1) ? q + 1 : q;
}

/** The processor's `smart_resize`: the size an image is resized to, `[height, width]`. */
export function smartResize(
  height: number,
  width: number,
  factor: number,
  minPixels: number,
  maxPixels: number,
): [number, number] {
  let h = roundHalfEven(height, factor) * factor, w = roundHalfEven(width, factor) * factor;
  if (h * w > maxPixels) {
    const beta = Math.sqrt((height * width) / maxPixels);
    h = Math.max(factor, Math.floor(height / beta / factor) * factor);
    w = Math.max(factor, Math.floor(width / beta / factor) * factor);
  } else if (h * w < minPixels) {
    const beta = Math.sqrt(minPixels / (height * width));
    h = Math.ceil(height * beta / factor) * factor;
    w = Math.ceil(width * beta / factor) * factor;
  }
  return [h, w];
}

/**
 * The count of `<|image_pad|>` tokens for an image: a string saying why the processor would
 * refuse it instead (`VisionImageError`).
 */
export function qwenImageTokens(
  p: QwenImageProcessor,
): (size: ImageSize) => number | VisionImageError {
  const factor = p.patchSize * p.mergeSize;
  return ({ width, height }) => {
    const ratio = Math.max(width, height) / Math.min(width, height);
    if (ratio > MAX_RATIO) {
      return {
        refused: `its aspect ratio is ${ratio.toFixed(1)}; the image processor takes at most ` +
          `${MAX_RATIO}`,
      };
    }
    const [h, w] = smartResize(height, width, factor, p.minPixels, p.maxPixels);
    return (h / p.patchSize) * (w / p.patchSize) / (p.mergeSize * p.mergeSize);
  };
}
