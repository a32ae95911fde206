/**
 * The canonical conversation: OpenAI-chat-shaped messages that every wire protocol converts into
 * and that the chat template renders. Protocol-opaque echoes (signatures, encrypted reasoning,
 * item ids) are not part of it: matching and rendering only look at what the model sees.
 *
 * @module
 */

/** A tool call as the model produced it (or as the client echoes it). */
export interface ToolCall {
  /** Verbatim id (`toolu_…`, `call_…`); never rendered, used to link results. */
  id: string;
  name: string;
  /** The arguments JSON exactly as a string (model's own spacing kept when it is ours). */
  arguments: string;
  /** `custom` for free-form (non-JSON) tools such as Codex's grammar tools. */
  kind?: "function" | "custom";
}

export interface SystemMessage {
  role: "system";
  content: string;
}

export interface UserMessage {
  role: "user";
  content: string;
}

export interface AssistantMessage {
  role: "assistant";
  content: string;
  reasoning_content?: string;
  tool_calls?: ToolCall[];
}

export interface ToolMessage {
  role: "tool";
  content: string;
  tool_call_id: string;
  name?: string;
}

export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** A tool the client offers, reduced to what a template can render; `raw` keeps the original. */
export interface ToolSpec {
  name: string;
  description?: string;
  /** JSON schema of the arguments (for `custom` tools: a single string `input`). */
  parameters?: unknown;
  kind: "function" | "custom";
  raw?: unknown;
}

export interface SamplingParams {
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  stop?: string[];
}

export type Protocol = "anthropic" | "chat" | "responses";

/** One agent request after wire conversion. */
export interface CanonicalRequest {
  protocol: Protocol;
  model: string;
  messages: Message[];
  tools: ToolSpec[];
  sampling: SamplingParams;
  stream: boolean;
  /** Whether the client asked for usage in the stream (Chat `stream_options.include_usage`). */
  includeUsage?: boolean;
  /**
   * The client's own session id, when it sends one (Claude Code `x-claude-code-session-id`, Codex
   * `session-id`): retries are matched within one session.
   */
  session?: string;
}

/** Why generation stopped, in protocol-neutral words. */
export type StopReason = "stop" | "length" | "tool_calls";

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  /** Tokens of the output that were reasoning (`<think>` content). */
  reasoning_tokens: number;
  /** Prompt tokens reused verbatim from earlier turns (the bridged prefix). */
  cached_tokens: number;
}

/** What a protocol module turns into its response: the parsed assistant turn. */
export interface TurnAnswer {
  /** Gateway id of the turn; protocols derive their message/response ids from it. */
  id: string;
  model: string;
  message: AssistantMessage;
  stopReason: StopReason;
  usage: Usage;
  /** Unix seconds. */
  created: number;
}
