/**
 * The policy model's language: tokenizer files, model families (rendering, delta rendering,
 * output parsing, per family: `families/`), the chat template.
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
export { PolicyModel, type PolicyModelOptions } from "./policy_model.ts";
export type { Rendered, RenderOptions } from "./families/mod.ts";
export { type SpecialTextHit } from "./special_text.ts";
export { DEFAULT_MODEL_DIR, loadModelFiles, type ModelFiles, QWEN3_SHA256 } from "./model_files.ts";
export {
  type AddedToken,
  loadTokenizer,
  type LoadTokenizerOptions,
  type TextTokenizer,
} from "./tokenizer.ts";
export { toTemplateMessages, toTemplateTools } from "./template_input.ts";
export { NativeMemoryTrim, trimNativeMemory } from "./native_memory.ts";
export type {
  OutputParser,
  ParsedOutput,
  StreamDeltas,
  StreamingOutputParser,
} from "./parsers/mod.ts";
export {
  type ChatFormat,
  deepSeekToolsText,
  type DeltaHistory,
  FAMILIES,
  FamilyError,
  familyNamed,
  type FamilyQuirks,
  GENERIC_FAMILY,
  GlmTextRenderer,
  LagunaTextRenderer,
  MiniMaxM2TextRenderer,
  type ModelFamily,
  NemotronTextRenderer,
  qwen3SampledText,
  TOOL_PARSERS,
  type TurnEnd,
} from "./families/mod.ts";
export {
  type ArgValue,
  isPythonSpace,
  Num,
  pythonFloatRepr,
  pythonJson,
  pythonJsonDumps,
  pythonScalarStr,
  pythonString,
  pythonStrip,
} from "./python_json.ts";
