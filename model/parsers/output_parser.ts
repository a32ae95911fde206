/**
 * The contract for turning a model family's sampled ids into an assistant message, whole
 * (`OutputParser`) or while they are sampled (`StreamingOutputParser`).
 *
 * @module
 */
import type { AssistantMessage } from "../../canonical/mod.ts";

export interface ParsedOutput {
  message: AssistantMessage;
  /** `<tool_call>` blocks that did not parse; their text stays in `content`. */
  malformedToolCalls: number;
  /** Sampled ids that belong to reasoning (think tags included). */
  reasoningTokens: number;
}

export interface OutputParser {
  readonly name: string;
  /**
   * @param ids the sampled ids, end-of-turn tokens included or not
   * @param newToolCallId mints the id the client will see for each parsed tool call
   */
  parse(ids: readonly number[], newToolCallId: () => string): Promise<ParsedOutput>;
}

/** Text to show the client, new since the previous `push`. */
export interface StreamDeltas {
  reasoning: string;
  text: string;
}

export interface StreamingOutputParser {
  /**
   * Feeds the next sampled ids (any number, end-of-turn ids included or not) and returns the
   * text they settle. Calls are serialized: a `push` started before the previous one resolved
   * waits for it.
   */
  push(ids: number[]): Promise<StreamDeltas>;
}
