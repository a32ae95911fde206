/**
 * How many image tokens Gemma 4's image processor (`Gemma4ImageProcessor`) gives an image of a
 * size, without its pixels:
 *
 * 1. Resize keeping the aspect ratio to the largest size within the patch budget
 *    (`max_soft_tokens × pooling²` patches of `patch` pixels: the area is scaled by
 *    `sqrt(budget / area)`, up or down), each side rounded down to a multiple of
 *    `pooling × patch` (48); a side that rounds to nothing becomes one multiple and the other
 *    `floor(long / short)` multiples, at most the budget's length. Both sides rounding to nothing
 *    is refused, as the processor refuses it.
 * 2. Patches: `(height / patch) × (width / patch)`.
 * 3. Pooling: every `pooling × pooling` patches are one soft token.
 *
 * The same float operations in the same order as `transformers`' `get_aspect_ratio_preserving_size`
 * (`tests/families/gemma4_images_test.ts` checks against the processor).
 *
 * @module
 */
import type { ImageSize, VisionImageError } from "./family.ts";

/** The settings the count needs, as `processor_config.json`'s `image_processor` names them. */
export interface GemmaImageProcessor {
  patchSize: number;
  poolingKernelSize: number;
  /** Soft tokens an image has at most (`max_soft_tokens`: 70, 140, 280, 560 or 1120). */
  maxSoftTokens: number;
}

/**
 * Gemma 4's published `processor_config.json` (`google/gemma-4-E2B-it`, `-E4B-it`, `-26B-A4B-it`,
 * `-31B-it`): `image_processor` with `patch_size` 16, `pooling_kernel_size` 3, `max_soft_tokens`
 * 280 (`image_seq_length` 280), `Gemma4ImageProcessor`; `boi_token` `<|image>`, `image_token`
 * `<|image|>`, `eoi_token` `<image|>`.
 */
export const GEMMA4_IMAGE_PROCESSOR: GemmaImageProcessor = {
  patchSize: 16,
  poolingKernelSize: 3,
  maxSoftTokens: 280,
};

/** The model directory's settings over `defaults`. */
export function gemmaImageProcessor(
  config: Record<string, unknown> | undefined,
  defaults: GemmaImageProcessor,
): GemmaImageProcessor {
  if (!config) return defaults;
  const number = (value: unknown, fallback: number) => typeof value === "number" ? value : fallback;
  return {
    patchSize: number(config.patch_size, defaults.patchSize),
    poolingKernelSize: number(config.pooling_kernel_size, defaults.poolingKernelSize),
    maxSoftTokens: number(config.max_soft_tokens, defaults.maxSoftTokens),
  };
}

/** The processor's resize: `[height, width]`, or why it refuses the image. */
export function gemmaResize(
  height: number,
  width: number,
  p: GemmaImageProcessor,
): [number, number] | VisionImageError {
  const maxPatches = p.maxSoftTokens * p.poolingKernelSize ** 2;
  const targetPixels = maxPatches * p.patchSize ** 2;
  const factor = Math.sqrt(targetPixels / (height * width));
  const side = p.poolingKernelSize * p.patchSize;
  let h = Math.floor((factor * height) / side) * side;
  let w = Math.floor((factor * width) / side) * side;
  if (h === 0 && w === 0) return { refused: `it resizes to 0×0 pixels` };
  const longest = Math.floor(maxPatches / p.poolingKernelSize ** 2) * side;
  if (h === 0) {
    h = side;
    w = Math.min(Math.floor(width / height) * side, longest);
  } else if (w === 0) {
    w = side;
    h = Math.min(Math.floor(height / width) * side, longest);
  }
  if (h * w > targetPixels) {
    return { refused: `it resizes to ${h}×${w}, more than ${maxPatches} patches` };
  }
  return [h, w];
}

/** The count of `<|image|>` soft tokens for an image, or why the processor would refuse it. */
export function gemmaImageTokens(
  p: GemmaImageProcessor,
): (size: ImageSize) => number | VisionImageError {
  return ({ width, height }) => {
    const resized = gemmaResize(height, width, p);
    if (!Array.isArray(resized)) return resized;
    const [h, w] = resized;
    return (h / p.patchSize) * (w / p.patchSize) / p.poolingKernelSize ** 2;
  };
}
