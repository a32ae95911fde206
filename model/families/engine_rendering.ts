/**
 * What the `engine` family (`engine/`) asks of an inference engine: render a conversation into
 * the policy's prompt ids with the model's own chat template and tokenizer, and read sampled ids
 * back into an assistant message with its own tool-call and reasoning parsers. The family holds
 * no template and no parser of its own; `generation/vllm_render.ts` implements this over vLLM's
 * render API.
 *
 * @module
 */
import type { Message, ToolSpec } from "../../canonical/mod.ts";

/** A conversation to render, with the template variables it is rendered under. */
export interface EngineRenderRequest {
  messages: readonly Message[];
  tools: readonly ToolSpec[];
  templateKwargs: Readonly<Record<string, unknown>>;
  addGenerationPrompt: boolean;
}

/** Sampled ids to read back (end-of-turn ids already taken off), with the prompt they followed. */
export interface EngineParseRequest {
  /** The prompt the ids were sampled after (parsers read whether it left reasoning open). */
  promptIds: ArrayLike<number>;
  outputIds: readonly number[];
  /** The request's tools (parsers type arguments by them, and find no call without them). */
  tools: readonly ToolSpec[];
  templateKwargs: Readonly<Record<string, unknown>>;
}

/** What the engine's parsers read from the sampled ids. */
export interface EngineAnswer {
  content: string;
  /** Absent when the engine's reasoning parser found none (or it has none). */
  reasoning?: string;
  toolCalls: { name: string; arguments: string }[];
}

/** An engine that renders and reads back for rollgate. */
export interface EngineRendering {
  /** The engine and its address, for messages. */
  readonly where: string;
  /**
   * The engine's prompt ids for the conversation. Throws an `Error` when the engine refuses the
   * conversation itself (a template error, a prompt past its context), and a `GenerationError`
   * when the engine cannot be reached or is not set up to render.
   */
  render(request: EngineRenderRequest): Promise<number[]>;
  parse(request: EngineParseRequest): Promise<EngineAnswer>;
}
