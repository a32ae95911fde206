/**
 * Streaming output parsers: the deltas to show a client while a completion is being sampled.
 *
 * A streaming parser is fed the sampled ids in chunks of any size and answers with the new
 * reasoning and content text. It is conservative: it only emits what the complete parser
 * (`OutputParser.parse` on the final ids) is sure to give, so at every point the concatenated
 * deltas are a prefix of the final `reasoning_content` and `content`. Tool calls are never
 * streamed. At the end the caller parses the complete ids and sends what is left.
 *
 * @example
 * ```ts
 * import { streamingParserFor } from "./mod.ts";
 * import { PolicyModel } from "../mod.ts";
 * declare const chunks: AsyncIterable<number[]>; // sampled ids as they arrive
 * declare const allIds: number[]; // all of them, at the end
 *
 * const model = await PolicyModel.load();
 * const stream = streamingParserFor(model.parser, model);
 * const sent = { reasoning: "", text: "" };
 * for await (const ids of chunks) {
 *   const d = await stream.push(ids);
 *   sent.reasoning += d.reasoning;
 *   sent.text += d.text;
 * }
 * const { message } = await model.parse(allIds, () => "call_1");
 * message.content.startsWith(sent.text); // true, and so for the reasoning
 * ```
 *
 * @module
 */
import type { OutputParser, StreamDeltas, StreamingOutputParser } from "./output_parser.ts";
import { PlainParser } from "./plain.ts";
import { Qwen3Parser } from "./qwen3.ts";
import { IncrementalDecoder, Qwen3StreamParser } from "./qwen3_stream.ts";

export { IncrementalDecoder, Qwen3StreamParser } from "./qwen3_stream.ts";
export type { Qwen3StreamIds } from "./qwen3_stream.ts";
export type { StreamDeltas, StreamingOutputParser } from "./output_parser.ts";

/** What a streaming parser needs from the model; a `PolicyModel` is one. */
export interface StreamContext {
  /** Id of an added token such as `<think>`. */
  idOf(token: string): number | undefined;
  /** Ids that end a turn (the same ones the complete parser strips). */
  readonly stopTokenIds: readonly number[];
  decode(ids: number[]): Promise<string>;
}

/**
 * The streaming counterpart of a complete parser (as chosen by `selectParser`). A parser
 * without one streams nothing: everything comes from the complete parse at the end.
 */
export function streamingParserFor(
  parser: OutputParser,
  ctx: StreamContext,
): StreamingOutputParser {
  const decode = (ids: number[]) => ctx.decode(ids);
  if (parser instanceof Qwen3Parser) {
    const thinkStart = ctx.idOf("<think>"), thinkEnd = ctx.idOf("</think>");
    if (thinkStart !== undefined && thinkEnd !== undefined) {
      return new Qwen3StreamParser({
        thinkStart,
        thinkEnd,
        toolCall: ctx.idOf("<tool_call>"),
        endOfTurn: [...ctx.stopTokenIds],
      }, decode);
    }
  }
  if (parser instanceof PlainParser) return new PlainStreamParser([...ctx.stopTokenIds], decode);
  return { push: () => Promise.resolve({ reasoning: "", text: "" }) };
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
