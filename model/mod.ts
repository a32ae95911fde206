/**
 * The policy model's language: tokenizer files, chat-template rendering, delta rendering, output
 * parsing.
 *
 * @example
 * ```ts
 * import { PolicyModel } from "./mod.ts";
 *
 * const model = await PolicyModel.load();
 * const { ids } = await model.renderFull([{ role: "user", content: "hi" }], []);
 * ```
 *
 * @module
 */
export {
  PolicyModel,
  type PolicyModelOptions,
  type Rendered,
  type RenderOptions,
} from "./policy_model.ts";
export { type SpecialTextHit } from "./special_text.ts";
export { DEFAULT_MODEL_DIR, loadModelFiles, type ModelFiles, QWEN3_SHA256 } from "./model_files.ts";
export { loadTokenizer, type LoadTokenizerOptions, type TextTokenizer } from "./tokenizer.ts";
export { toTemplateMessages, toTemplateTools } from "./template_input.ts";
export { type OutputParser, type ParsedOutput, qwen3SampledText } from "./parsers/mod.ts";
export { type ArgValue, Num, pythonJson, pythonString } from "./python_json.ts";
