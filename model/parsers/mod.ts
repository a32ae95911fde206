/**
 * Output parsers, one per model family, chosen from the chat template.
 *
 * A new family is one file implementing `OutputParser` plus a line in `selectParser`.
 *
 * @module
 */
import type { OutputParser } from "./output_parser.ts";
import { Qwen3Parser } from "./qwen3.ts";
import { PlainParser } from "./plain.ts";

export type { OutputParser, ParsedOutput } from "./output_parser.ts";
export { Qwen3Parser, splitToolCalls } from "./qwen3.ts";
export { PlainParser } from "./plain.ts";
export { rawMember } from "./json_member.ts";
export { qwen3SampledText } from "./qwen3_sampled_text.ts";
export * from "./stream_parser.ts";

export interface ParserContext {
  template: string;
  /** Id of a token text, if the vocabulary has it as an added token. */
  idOf(token: string): number | undefined;
  endOfTurn: number[];
  decode(ids: number[]): Promise<string>;
}

/** Picks the parser for a chat template: Qwen3-style (`<think>`, `<tool_call>`) or plain. */
export function selectParser(ctx: ParserContext): OutputParser {
  const thinkStart = ctx.idOf("<think>");
  const thinkEnd = ctx.idOf("</think>");
  if (
    ctx.template.includes("<tool_call>") && thinkStart !== undefined && thinkEnd !== undefined
  ) {
    return new Qwen3Parser({ thinkStart, thinkEnd, endOfTurn: ctx.endOfTurn }, ctx.decode);
  }
  return new PlainParser(ctx.endOfTurn, ctx.decode);
}
