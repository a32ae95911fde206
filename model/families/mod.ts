/**
 * Model families: how a policy of each family reads a conversation and how its output is read
 * back. One folder per family, one entry per family in `FAMILIES`.
 *
 * A model directory is matched to a family by `detectFamily` (the first family in `FAMILIES`
 * whose `detect` accepts its `tokenizer_config.json` / chat template), or forced by name
 * (`--model-family`); a directory with a chat template and no known family gets the generic
 * family (its own template, output read by `--tool-parser`). How to add a family: `README.md`
 * in this folder.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bindFamily } from "./mod.ts";
 * import { loadModelFiles } from "../model_files.ts";
 * import { loadTokenizer } from "../tokenizer.ts";
 *
 * const files = await loadModelFiles(); // Qwen3's, detected as the qwen3 family
 * const tokenizer = await loadTokenizer(files);
 * const format = await bindFamily({ files, tokenizer });
 * const { ids } = await format.renderer.renderFull([{ role: "user", content: "hi" }], []);
 * const prompt = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n";
 * assert.equal(await tokenizer.decode(ids), prompt); // with the generation prompt
 * ```
 *
 * @module
 */
import { addedTokenIds, type ModelFiles } from "../model_files.ts";
import type { TextTokenizer } from "../tokenizer.ts";
import { type ChatFormat, FamilyError, type ModelFamily } from "./family.ts";
import type { EngineRendering } from "./engine_rendering.ts";
import { deepSeekV31 } from "./deepseek_v31/mod.ts";
import { deepSeekR1, deepSeekV3 } from "./deepseek_v3/mod.ts";
import { deepSeekV4 } from "./deepseek_v4/mod.ts";
import { generic } from "./generic/mod.ts";
import { engine } from "./engine/mod.ts";
import { glm45, glm5, glm51, glm53 } from "./glm/mod.ts";
import { kimiK2 } from "./kimi_k2/mod.ts";
import { kimiK25 } from "./kimi_k25/mod.ts";
import { miniMaxM2 } from "./minimax_m2/mod.ts";
import { laguna } from "./laguna/mod.ts";
import { hy3 } from "./hy3/mod.ts";
import { gemma4 } from "./gemma4/mod.ts";
import { inkling } from "./inkling/mod.ts";
import { llama3 } from "./llama3/mod.ts";
import { gptOss } from "./gpt_oss/mod.ts";
import { qwen3 } from "./qwen3/mod.ts";
import { qwen35, qwen36, qwen38 } from "./qwen35/mod.ts";
import { qwen3Coder } from "./qwen3_coder/mod.ts";
import { qwen3Vl } from "./qwen3_vl/mod.ts";
import { primeQwen3 } from "./prime_qwen3/mod.ts";
import { nemotron3, nemotron35, nemotron3Ultra } from "./nemotron3/mod.ts";
import { requireToolParser } from "./tool_parsers.ts";

export {
  type AnswerInPlace,
  type ChatFormat,
  type DeltaHistory,
  type Rendered,
  type RenderOptions,
  type TurnEnd,
  turnEnd,
} from "./family.ts";
export { checkTemplateSettings, TemplateSettingError } from "./template_options.ts";
export type {
  EngineAnswer,
  EngineParseRequest,
  EngineRendering,
  EngineRenderRequest,
} from "./engine_rendering.ts";
export { closedOutput, joinTurn, type TurnJoin } from "./turn_join.ts";
export { TOOL_PARSERS } from "./tool_parsers.ts";
export { qwen3SampledText } from "./qwen3/mod.ts";
export { NemotronTextRenderer } from "./nemotron3/mod.ts";
export { GlmTextRenderer } from "./glm/mod.ts";
export { deepSeekToolsText } from "./deepseek_v31/mod.ts";
export { DeepSeekV3TextRenderer } from "./deepseek_v3/mod.ts";
export { Qwen3VlTextRenderer } from "./qwen3_vl/mod.ts";
export { HY3, Hy3TextRenderer } from "./hy3/mod.ts";
export { INK } from "./inkling/mod.ts";
export { GEMMA } from "./gemma4/mod.ts";

/** Every family with its own detection, most specific first. */
export const FAMILIES: readonly ModelFamily[] = [
  gptOss,
  deepSeekV4,
  nemotron3Ultra,
  nemotron35,
  nemotron3,
  primeQwen3,
  qwen38,
  qwen36,
  qwen35,
  qwen3Coder,
  glm53,
  glm51,
  glm5,
  glm45,
  kimiK25,
  kimiK2,
  miniMaxM2,
  laguna,
  gemma4,
  hy3,
  inkling,
  qwen3Vl,
  qwen3,
  deepSeekV31,
  deepSeekR1,
  deepSeekV3,
  llama3,
];

/** The fallback: the model's own chat template, output read by `--tool-parser`. */
export const GENERIC_FAMILY: ModelFamily = generic;

/** The engine renders every prompt and parses every answer (`--model-family engine` only). */
export const ENGINE_FAMILY: ModelFamily = engine;

/** Families chosen by name only: the generic fallback and the engine-rendered family. */
const NAMED_ONLY: readonly ModelFamily[] = [generic, engine];

/** A family by registry name. */
export function familyNamed(name: string): ModelFamily | undefined {
  return [...FAMILIES, ...NAMED_ONLY].find((f) => f.name === name);
}

/** The family a model directory belongs to (the generic family when none claims it). */
export function detectFamily(files: ModelFiles): ModelFamily {
  return FAMILIES.find((f) => f.detect(files)) ?? generic;
}

interface BindOptions {
  files: ModelFiles;
  tokenizer: TextTokenizer;
  /** Force a family by name (`--model-family`); default: detected. */
  family?: string;
  /** Output parser for the generic family (`--tool-parser`). */
  toolParser?: string;
  templateKwargs?: Record<string, unknown>;
  /** The engine that renders and parses for the `engine` family. */
  rendering?: EngineRendering;
}

/**
 * The family `files` are served with: the one named (`--model-family`), else the detected one,
 * checked against the output parser asked for (`--tool-parser`, the generic family's only). Reads
 * nothing but `files`: a command line is checked with it before anything slow is loaded.
 *
 * @throws FamilyError for an unknown family or tool parser, a tool parser for a family with its
 *   own output format, or a directory nothing can serve (no family and no chat template)
 */
export function chooseFamily(
  files: ModelFiles,
  name: string | undefined,
  toolParser: string | undefined,
): ModelFamily {
  let family: ModelFamily | undefined;
  if (name !== undefined) {
    family = familyNamed(name);
    if (!family) {
      const known = [...FAMILIES, ...NAMED_ONLY].map((f) => f.name).join(", ");
      throw new FamilyError(`unknown model family ${name}; known: ${known}`);
    }
  } else {
    family = detectFamily(files);
    if (family === generic && !generic.detect(files)) {
      throw new FamilyError(
        `${files.dir}: no known model family and no chat template; ` +
          "pass --model-family NAME (engine: the engine renders)",
      );
    }
  }
  if (toolParser !== undefined) {
    if (family !== generic) {
      throw new FamilyError(
        `--tool-parser is for the generic family; ${family.name} reads its own output format`,
      );
    }
    requireToolParser(toolParser);
  }
  return family;
}

/**
 * Detects (or looks up) the family and binds it to the tokenizer.
 *
 * @throws FamilyError as {@link chooseFamily} does, or for a tokenizer that lacks the family's
 *   special tokens
 */
export async function bindFamily(options: BindOptions): Promise<ChatFormat> {
  const family = chooseFamily(options.files, options.family, options.toolParser);
  const added = addedTokenIds(options.files.config);
  return await family.bind({
    files: options.files,
    tokenizer: options.tokenizer,
    idOf: (token) => added.get(token),
    templateKwargs: options.templateKwargs ?? {},
    toolParser: options.toolParser,
    rendering: options.rendering,
  });
}
