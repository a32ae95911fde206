/**
 * Fallback parser for templates without a known reasoning or tool-call format: everything the
 * model sampled (minus end-of-turn tokens) is content. Text that looks like a tool call in some
 * family's markup (`markers`) is counted as a malformed tool call, so a policy whose calls
 * nobody parses shows up in the turn's record and the audit instead of passing as plain answers.
 *
 * @module
 */
import { IncrementalDecoder } from "./incremental_decoder.ts";
import type {
  OutputParser,
  ParsedOutput,
  StreamDeltas,
  StreamingOutputParser,
} from "./output_parser.ts";

export class PlainParser implements OutputParser {
  readonly name = "plain";
  constructor(
    private readonly endOfTurn: number[],
    private readonly decode: (ids: number[]) => Promise<string>,
    /** Texts that start a tool call in some family's format (`<tool_call>`, …). */
    private readonly markers: readonly string[] = [],
  ) {}

  async parse(sampled: readonly number[]): Promise<ParsedOutput> {
    let end = sampled.length;
    while (end > 0 && this.endOfTurn.includes(sampled[end - 1])) end--;
    const content = await this.decode(sampled.slice(0, end));
    let malformedToolCalls = 0;
    for (const marker of this.markers) {
      for (let i = content.indexOf(marker); i >= 0; i = content.indexOf(marker, i + 1)) {
        malformedToolCalls++;
      }
    }
    return { message: { role: "assistant", content }, malformedToolCalls, reasoningTokens: 0 };
  }
}

/** Streams `PlainParser` output: all text, end-of-turn ids held until more text follows. */
export class PlainStreamParser implements StreamingOutputParser {
  readonly #decoder: IncrementalDecoder;
  #pendingEndOfTurn: number[] = [];
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly endOfTurn: number[],
    decode: (ids: number[]) => Promise<string>,
  ) {
    this.#decoder = new IncrementalDecoder(decode);
  }

  push(ids: number[]): Promise<StreamDeltas> {
    const run = this.#queue.then(() => this.#push(ids));
    this.#queue = run.catch(() => {});
    return run;
  }

  async #push(ids: number[]): Promise<StreamDeltas> {
    const feed: number[] = [];
    for (const id of ids) {
      if (this.endOfTurn.includes(id)) {
        this.#pendingEndOfTurn.push(id);
        continue;
      }
      feed.push(...this.#pendingEndOfTurn, id);
      this.#pendingEndOfTurn = [];
    }
    return { reasoning: "", text: await this.#decoder.push(feed) };
  }
}
