/**
 * Test-only bridge to OpenAI's `openai-harmony` (PyPI, in the reference venv): renders
 * conversations, parses sampled ids and encodes text as gpt-oss's official renderer does, for
 * cross-checking rollgate's gpt-oss family. The o200k vocabulary harmony needs is rebuilt from the
 * model directory's `tokenizer.json` and checked by sha256 (`harmony_vocab.py`); nothing is
 * downloaded.
 *
 * @example
 * ```ts
 * import { withHarmony } from "./harmony_env.ts";
 * declare const GPT_OSS_DIR: string; // the gpt-oss tokenizer files
 *
 * const [r] = await withHarmony(GPT_OSS_DIR, { conversation_start_date: "2025-06-28" }, [
 *   { op: "render", messages: [{ role: "user", content: "hi" }], add_generation_prompt: true },
 * ]);
 * ```
 *
 * @module
 */
import type { RenderRequest } from "./renderers_env.ts";
import { runReferenceScript } from "./python_env.ts";

/**
 * Where renderers' `gpt_oss` converts messages differently from the format
 * (`RENDERERS_CHOICES` in `harmony_reference.py` describes each).
 */
export const RENDERERS_CHOICES = [
  "generation_prompt",
  "return",
  "unconstrained_calls",
  "final_preamble",
  "analysis_rule",
  "first_system_hoisted",
  "empty_parameters",
  "unknown_tool_author",
] as const;

export type RenderersChoice = typeof RENDERERS_CHOICES[number];

/** A render, messages converted as the format says or with some (all) of renderers' choices. */
export interface HarmonyRenderRequest extends RenderRequest {
  conversion?: readonly RenderersChoice[] | "renderers";
  /**
   * Tool schemas go to harmony unchanged. Otherwise an object schema without properties is
   * passed as no parameters, the declaration gpt-oss's own chat template writes (`() => any`),
   * where `openai-harmony` 0.0.8 writes `(_: {\n}) => any`.
   */
  tools_as_given?: boolean;
}

export interface HarmonyParseRequest {
  op: "parse";
  ids: number[];
}

export interface HarmonyEncodeRequest {
  op: "encode";
  text: string;
}

/** One harmony message as harmony's parser reads it. */
export interface HarmonyParsedMessage {
  role: string;
  name: string | null;
  recipient: string | null;
  channel: string | null;
  content_type: string | null;
  text: string;
}

export interface HarmonyResult {
  ids?: number[];
  text?: string;
  messages?: HarmonyParsedMessage[];
  error?: string;
}

/**
 * Runs every request through `openai-harmony` in one Python process.
 *
 * @param config the system message's fields (`conversation_start_date`, `reasoning_effort`, …)
 */
export async function withHarmony(
  modelDir: string,
  config: Record<string, unknown>,
  requests: readonly (HarmonyRenderRequest | HarmonyParseRequest | HarmonyEncodeRequest)[],
): Promise<HarmonyResult[]> {
  return await runReferenceScript(
    "harmony_reference.py",
    [modelDir, JSON.stringify(config)],
    [...requests],
  ) as HarmonyResult[];
}
