/**
 * The contract for turning a model family's sampled ids into an assistant message.
 *
 * @module
 */
import type { AssistantMessage } from "../messages.ts";

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
