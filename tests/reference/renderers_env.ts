/**
 * Test-only bridge to PrimeIntellect's `renderers` (PyPI `renderers==0.1.12`, in the reference
 * venv): renders conversations and parses completions with a named renderer over a tokenizer
 * loaded from a local model directory (never the hub), for cross-checking rollgate's families.
 *
 * @example
 * ```ts
 * import { withRenderers } from "./renderers_env.ts";
 * declare const QWEN3_DIR: string; // a local model directory
 *
 * const [r] = await withRenderers(QWEN3_DIR, "qwen3.5", {}, [
 *   { op: "render", messages: [{ role: "user", content: "hi" }], add_generation_prompt: true },
 * ]);
 * ```
 *
 * @module
 */
import type { Message, ToolSpec } from "../../canonical/mod.ts";
import { toTemplateMessages, toTemplateTools } from "../../model/template_input.ts";
import { runReferenceScript } from "./python_env.ts";

export { referencePython } from "./python_env.ts";

export interface RenderRequest {
  op: "render";
  /** OpenAI-shaped messages (`toTemplateMessages`), passed to the renderer verbatim. */
  messages: unknown[];
  tools?: unknown[] | null;
  add_generation_prompt: boolean;
}

export interface ParseRequest {
  op: "parse";
  ids: number[];
  tools?: unknown[] | null;
}

/** `bridge_to_next_turn`: the next prompt as the previous prompt + completion + new messages. */
export interface BridgeRequest {
  op: "bridge";
  previous_prompt_ids: number[];
  previous_completion_ids: number[];
  new_messages: unknown[];
  tools?: unknown[] | null;
}

export interface BridgeResult {
  /** The bridged prompt, or null where the renderer re-renders the conversation instead. */
  ids?: number[] | null;
  error?: string;
}

export interface RenderResult {
  /** The renderer's ids. */
  ids?: number[];
  /** Their decode, special tokens kept. */
  text?: string;
  /** `tokenizer.encode(text)`: what a template rendering `text` tokenizes to. */
  encoded_ids?: number[];
  error?: string;
}

export interface ParseResult {
  content?: string;
  reasoning_content?: string | null;
  tool_calls?: { name: string | null; arguments: unknown; status: string }[];
  error?: string;
}

/** The request to render a canonical conversation as rollgate's templates see it. */
export function renderRequest(
  messages: readonly Message[],
  tools: readonly ToolSpec[],
  addGenerationPrompt: boolean,
): RenderRequest {
  const t = toTemplateTools(tools);
  return {
    op: "render",
    messages: toTemplateMessages(messages),
    tools: t.length > 0 ? t : null,
    add_generation_prompt: addGenerationPrompt,
  };
}

/** The request to bridge from a recorded turn (prompt + sampled ids) to the next prompt. */
export function bridgeRequest(
  previousPromptIds: readonly number[],
  previousCompletionIds: readonly number[],
  newMessages: readonly Message[],
  tools: readonly ToolSpec[],
): BridgeRequest {
  const t = toTemplateTools(tools);
  return {
    op: "bridge",
    previous_prompt_ids: [...previousPromptIds],
    previous_completion_ids: [...previousCompletionIds],
    new_messages: toTemplateMessages(newMessages),
    tools: t.length > 0 ? t : null,
  };
}

/**
 * Runs every request through `renderers` in one Python process.
 *
 * @param renderer a `renderers` config name (`qwen3.5`, `qwen3.6`, `glm-4.5`, …)
 * @param config fields of that config (`{ enable_thinking: true }`)
 */
export async function withRenderers(
  modelDir: string,
  renderer: string,
  config: Record<string, unknown>,
  requests: readonly (RenderRequest | ParseRequest | BridgeRequest)[],
): Promise<(RenderResult & ParseResult & BridgeResult)[]> {
  return await runReferenceScript(
    "renderers_reference.py",
    [modelDir, renderer, JSON.stringify(config)],
    [...requests],
  ) as (RenderResult & ParseResult & BridgeResult)[];
}
