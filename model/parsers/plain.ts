/**
 * Fallback parser for templates without a known reasoning or tool-call format: everything the
 * model sampled (minus end-of-turn tokens) is content.
 *
 * @module
 */
import type { OutputParser, ParsedOutput } from "./output_parser.ts";

export class PlainParser implements OutputParser {
  readonly name = "plain";
  constructor(
    private readonly endOfTurn: number[],
    private readonly decode: (ids: number[]) => Promise<string>,
  ) {}

  async parse(sampled: readonly number[]): Promise<ParsedOutput> {
    let end = sampled.length;
    while (end > 0 && this.endOfTurn.includes(sampled[end - 1])) end--;
    const content = await this.decode(sampled.slice(0, end));
    return { message: { role: "assistant", content }, malformedToolCalls: 0, reasoningTokens: 0 };
  }
}
