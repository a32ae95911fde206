/**
 * The policy model's language: tokenizer files, model families (rendering, delta rendering,
 * output parsing, per family: `families/`), the chat template.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PolicyModel } from "./mod.ts";
 *
 * const model = await PolicyModel.load(); // Qwen3's files, shipped by npm
 * const { ids } = await model.renderFull([{ role: "user", content: "hi" }], [], true);
 * const text = await model.decode(ids);
 * assert.ok(text.startsWith("<|im_start|>user\nhi<|im_end|>"));
 * assert.ok(text.endsWith("<|im_start|>assistant\n"));
 * ```
 *
 * @module
 */
export { PolicyModel, type PolicyModelOptions } from "./policy_model.ts";
export type { Rendered } from "./families/mod.ts";
export { type SpecialTextHit } from "./special_text.ts";
export { loadModelFiles } from "./model_files.ts";
export { loadTokenizer } from "./tokenizer.ts";
export { toTemplateMessages, toTemplateTools } from "./template_input.ts";
export { NativeMemoryTrim, trimNativeMemory } from "./native_memory.ts";
export {
  deepSeekToolsText,
  DeepSeekV3TextRenderer,
  type DeltaHistory,
  ENGINE_FAMILY,
  type EngineAnswer,
  type EngineParseRequest,
  type EngineRendering,
  type EngineRenderRequest,
  FAMILIES,
  GEMMA,
  GENERIC_FAMILY,
  GlmTextRenderer,
  HY3,
  Hy3TextRenderer,
  INK,
  NemotronTextRenderer,
  qwen3SampledText,
  Qwen3VlTextRenderer,
  TemplateSettingError,
  TOOL_PARSERS,
} from "./families/mod.ts";
export { type ArgValue, Num, pythonJson, pythonString, pythonStrip } from "./python_json.ts";
