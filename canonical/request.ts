/**
 * One agent request after wire conversion: what every protocol module produces and the turn
 * runner consumes.
 *
 * @module
 */
import type { Message, ToolSpec } from "./messages.ts";

export interface SamplingParams {
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  stop?: string[];
}

export type Protocol = "anthropic" | "chat" | "responses" | "gemini";

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

/**
 * What answering a request needs of it: not its history, so a turn waiting for its answer keeps
 * nothing of the request body it came in.
 */
export type AnswerOptions = Pick<CanonicalRequest, "stream" | "includeUsage">;
