/**
 * Streaming gpt-oss output: the same reading as `output.ts`, message by message, sending only
 * what the complete parse is sure to give.
 *
 * - A header is read once its `<|message|>` arrives; nothing is sent for a header.
 * - An `analysis` body streams as reasoning; a `final` or `commentary` body without a recipient
 *   streams as content; a second piece of either starts with the `\n` that joins them.
 * - Content stops for good at the first message that is not plain content or reasoning (a call,
 *   which may be malformed and then puts its text into the content, or ids outside any
 *   message): everything after it comes from the complete parse. Reasoning goes on streaming.
 * - End ids and `<|start|>` send nothing. Bodies are decoded incrementally, so a character split
 *   across ids is sent once, whole.
 *
 * @module
 */
import {
  IncrementalDecoder,
  type StreamDeltas,
  type StreamingOutputParser,
} from "../../parsers/mod.ts";
import { type MessageKind, messageKind, readHeader } from "./output.ts";
import type { HarmonyIds } from "./render.ts";

type State =
  | { at: "header"; ids: number[]; promptOpened: boolean }
  | { at: "body"; kind: MessageKind }
  | { at: "between" };

export class HarmonyStreamParser implements StreamingOutputParser {
  #state: State = { at: "header", ids: [], promptOpened: true };
  #contentOpen = true;
  #pieces = { reasoning: 0, content: 0 };
  readonly #decoder: IncrementalDecoder;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly t: HarmonyIds,
    private readonly decode: (ids: number[]) => Promise<string>,
  ) {
    this.#decoder = new IncrementalDecoder(decode);
  }

  push(ids: number[]): Promise<StreamDeltas> {
    const run = this.#queue.then(() => this.#push(ids));
    this.#queue = run.catch(() => {});
    return run;
  }

  #isEnd(id: number): boolean {
    return id === this.t.end || id === this.t.return || id === this.t.call;
  }

  /** Where a body's text goes, or null when it is not streamed. */
  #target(kind: MessageKind): keyof StreamDeltas | null {
    if (kind === "reasoning") return "reasoning";
    return kind === "content" && this.#contentOpen ? "text" : null;
  }

  async #push(ids: readonly number[]): Promise<StreamDeltas> {
    const out: StreamDeltas = { reasoning: "", text: "" };
    let feed: number[] = [];
    /** Sends what `feed` settles of a streamed body. */
    const flush = async (final: boolean) => {
      const s = this.#state;
      const target = s.at === "body" ? this.#target(s.kind) : null;
      if (target !== null) out[target] += await this.#decoder.push(feed, final);
      feed = [];
    };
    for (const id of ids) {
      const s = this.#state;
      if (s.at === "body") {
        if (id === this.t.start || this.#isEnd(id)) {
          await flush(true);
          this.#state = id === this.t.start
            ? { at: "header", ids: [], promptOpened: false }
            : { at: "between" };
        } else if (this.#target(s.kind) !== null) {
          feed.push(id);
        }
        continue;
      }
      if (s.at === "between") {
        if (this.#isEnd(id)) continue;
        if (id === this.t.start) {
          this.#state = { at: "header", ids: [], promptOpened: false };
        } else {
          // Ids outside any message: content text in the complete parse.
          this.#contentOpen = false;
          this.#state = { at: "header", ids: [id], promptOpened: false };
        }
        continue;
      }
      if (id === this.t.message) {
        const kind = messageKind(readHeader(await this.decode(s.ids), s.promptOpened));
        if (kind !== "reasoning" && kind !== "content") this.#contentOpen = false;
        this.#state = { at: "body", kind };
        const piece = kind === "reasoning" ? "reasoning" : "content";
        const target = this.#target(kind);
        if (target !== null && this.#pieces[piece]++ > 0) out[target] += "\n";
      } else if (id === this.t.start || this.#isEnd(id)) {
        // A header without a body: text (or a malformed call) in the complete parse.
        if (s.ids.length > 0) this.#contentOpen = false;
        this.#state = id === this.t.start
          ? { at: "header", ids: [], promptOpened: false }
          : { at: "between" };
      } else {
        s.ids.push(id);
      }
    }
    await flush(false);
    return out;
  }
}
