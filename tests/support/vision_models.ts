/**
 * Model directories of the vision families for image tests: the family's tokenizer double (see
 * `tokenizer_doubles.ts`) plus the processor settings the model publishes (no hub here: written
 * from the published values), read by rollgate's family and by `transformers` alike:
 *
 * - Qwen3-VL: Qwen3's real vocabulary (which holds the vision tokens) and a template double, with
 *   `preprocessor_config.json` and `video_preprocessor_config.json` of
 *   `Qwen/Qwen3-VL-8B-Instruct` (the 4B and 30B-A3B publish the same);
 * - Gemma 4: Qwen3's vocabulary with Gemma's added tokens, with `processor_config.json` of
 *   `google/gemma-4-E4B-it` (the E2B, 26B-A4B and 31B publish the same image settings).
 *
 * @module
 */
import { tokenizerDoubleDir } from "./tokenizer_doubles.ts";

/** `preprocessor_config.json` of Qwen3-VL Instruct. */
export const QWEN3_VL_PREPROCESSOR_CONFIG = {
  size: { longest_edge: 16777216, shortest_edge: 65536 },
  patch_size: 16,
  temporal_patch_size: 2,
  merge_size: 2,
  image_mean: [0.5, 0.5, 0.5],
  image_std: [0.5, 0.5, 0.5],
  processor_class: "Qwen3VLProcessor",
  image_processor_type: "Qwen2VLImageProcessorFast",
};

/** `video_preprocessor_config.json` of Qwen3-VL Instruct (`Qwen3VLProcessor` loads one). */
export const QWEN3_VL_VIDEO_PREPROCESSOR_CONFIG = {
  size: { longest_edge: 25165824, shortest_edge: 4096 },
  patch_size: 16,
  temporal_patch_size: 2,
  merge_size: 2,
  image_mean: [0.5, 0.5, 0.5],
  image_std: [0.5, 0.5, 0.5],
  processor_class: "Qwen3VLProcessor",
  video_processor_type: "Qwen3VLVideoProcessor",
};

/** The image part of Gemma 4's `processor_config.json`, with its token settings. */
export const GEMMA4_PROCESSOR_CONFIG = {
  processor_class: "Gemma4Processor",
  image_seq_length: 280,
  image_processor: {
    image_processor_type: "Gemma4ImageProcessor",
    do_convert_rgb: true,
    do_normalize: false,
    do_rescale: true,
    do_resize: true,
    image_mean: [0.0, 0.0, 0.0],
    image_std: [1.0, 1.0, 1.0],
    image_seq_length: 280,
    max_soft_tokens: 280,
    patch_size: 16,
    pooling_kernel_size: 3,
    resample: 3,
    rescale_factor: 1 / 255,
  },
};

/** A Gemma 4 directory with its processor settings; the caller removes it. */
export async function gemma4ModelDir(): Promise<string> {
  const dir = await tokenizerDoubleDir("gemma4");
  await Deno.writeTextFile(`${dir}/processor_config.json`, JSON.stringify(GEMMA4_PROCESSOR_CONFIG));
  return dir;
}

/** Writes the Qwen3-VL directory (`preprocessor` overrides the image settings); the caller removes it. */
export async function qwen3VlModelDir(
  preprocessor: Record<string, unknown> = QWEN3_VL_PREPROCESSOR_CONFIG,
): Promise<string> {
  const dir = await tokenizerDoubleDir("qwen3-vl");
  await Deno.writeTextFile(`${dir}/preprocessor_config.json`, JSON.stringify(preprocessor));
  await Deno.writeTextFile(
    `${dir}/video_preprocessor_config.json`,
    JSON.stringify(QWEN3_VL_VIDEO_PREPROCESSOR_CONFIG),
  );
  return dir;
}
