/**
 * The contract for turning a model family's sampled ids into an assistant message, whole
 * (`OutputParser`) or while they are sampled (`StreamingOutputParser`).
 *
 * A streaming parser is fed the sampled ids in chunks of any size and answers with the new
 * reasoning and content text. It is conservative: it only emits what the complete parser is sure
 * to give for the final ids, so at every point the concatenated deltas are a prefix of the final
 * `reasoning_content` and `content` (the streaming prefix guarantee). Tool calls are never
 * streamed; what was held back is sent from the complete parse at the end.
 *
 * @module
 */
import type { AssistantMessage, ToolSpec } from "../../canonical/mod.ts";

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

/** What a parser may know of the turn besides its ids. */
export interface ParseContext {
  /** The prompt the ids were sampled after (the engine family's parsers read it). */
  promptIds?: ArrayLike<number>;
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
    context?: ParseContext,
  ): Promise<ParsedOutput>;
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
