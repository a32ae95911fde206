/**
 * One agent request after wire conversion: what every protocol module produces and the turn
 * runner consumes.
 *
 * @module
 */
import type { ImageRef, Message, ToolSpec } from "./messages.ts";

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
  /**
   * Every image its messages show, once, by hash (`ImageRef.hash`), with its bytes: what the turn
   * stores when its store lacks them. Held by the request alone, so the bytes go with it.
   */
  images?: ReadonlyMap<string, RequestImage>;
}

/** An image of a request: its reference and its bytes. */
export interface RequestImage {
  ref: ImageRef;
  bytes: Uint8Array;
}

/**
 * What answering a request needs of it: not its history, so a turn waiting for its answer keeps
 * nothing of the request body it came in.
 */
export type AnswerOptions = Pick<CanonicalRequest, "stream" | "includeUsage">;
