/**
 * The contract for turning a model family's sampled ids into an assistant message.
 *
 * @module
 */
import type { AssistantMessage, ToolSpec } from "../messages.ts";

export interface ParsedOutput {
  message: AssistantMessage;
  /**
   * Tool calls that did not parse (in the family's own markup); their text stays in `content`,
   * so the agent sees it as text, and the count goes into the turn's record and the audit.
   */
  malformedToolCalls: number;
  /** Sampled ids that belong to reasoning (think tags included). */
  reasoningTokens: number;
}

export interface OutputParser {
  readonly name: string;
  /**
   * @param ids the sampled ids, end-of-turn tokens included or not
   * @param newToolCallId mints the id the client will see for each parsed tool call
   * @param tools the tools the request offered (parsers that type arguments by schema use them)
   */
  parse(
    ids: readonly number[],
    newToolCallId: () => string,
    tools?: readonly ToolSpec[],
  ): Promise<ParsedOutput>;
}
