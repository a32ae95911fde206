/**
 * A Qwen3-VL model directory for image tests: the tokenizer double of `qwen3-vl` (Qwen3's real
 * vocabulary, which holds the vision tokens, and a template double) plus the image and video
 * processor settings Qwen3-VL Instruct publishes (no hub here: written from the published values),
 * read by rollgate's family and by `transformers`' `AutoProcessor` alike. Published in
 * `Qwen/Qwen3-VL-8B-Instruct` (and the 4B and 30B-A3B) `preprocessor_config.json` and
 * `video_preprocessor_config.json`.
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

/** Writes the directory (`preprocessor` overrides the image settings); the caller removes it. */
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
