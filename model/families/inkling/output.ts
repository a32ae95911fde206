/**
 * Inkling's output: segments ending in `<|end_message|>`, each after the first opened by
 * `<|message_model|>` again, the turn ended by `<|content_model_end_sampling|>` (or
 * `<|endoftext|>`). A segment is reasoning (`<|content_thinking|>R`), text (`<|content_text|>T`)
 * or a call (`NAME<|content_invoke_tool_json|>{"name":…,"args":…}`); reasoning and text are joined
 * in order, verbatim. A call whose payload is not `{"name": …, "args": {…}}` stays text (its
 * decoded segment) and is counted as malformed; so is a segment of anything else. In the layout
 * the template writes, a call's arguments keep the policy's own JSON text.
 *
 * Streaming sends each segment when its `<|end_message|>` arrives (the complete parse reads the
 * same segments the same way, so what is sent is always a prefix of it).
 *
 * @module
 */
import type { ToolCall } from "../../../canonical/mod.ts";
import type {
  OutputParser,
  ParsedOutput,
  StreamDeltas,
  StreamingOutputParser,
} from "../../parsers/mod.ts";
import { pythonJson } from "../../python_json.ts";
import type { OutputFormat } from "../family.ts";
import { tryParseOrderedJson } from "../ordered_json.ts";

export interface InklingIds {
  model: number;
  text: number;
  thinking: number;
  invoke: number;
  end: number;
  /** Ids that end the turn. */
  stops: readonly number[];
}

type Segment =
  | { kind: "reasoning" | "text"; text: string }
  | { kind: "empty" }
  | { kind: "call"; call: Omit<ToolCall, "id"> }
  | { kind: "malformed"; text: string };

/** `<|end_message|>`s tried as the end of one call's payload before it counts as malformed. */
const MAX_ENDS = 64;

const LAYOUT = /^\{"name":("(?:[^"\\]|\\.)*"),"args":([\s\S]*)\}$/;

/** A call payload: name and arguments (the policy's JSON text in the template's layout). */
function readCall(payload: string): Omit<ToolCall, "id"> | null {
  const exact = LAYOUT.exec(payload);
  if (exact && tryParseOrderedJson(exact[2]) instanceof Map) {
    return { name: JSON.parse(exact[1]), arguments: exact[2] };
  }
  const parsed = tryParseOrderedJson(payload);
  if (!(parsed instanceof Map)) return null;
  const name = parsed.get("name"), args = parsed.get("args") ?? new Map();
  if (typeof name !== "string" || name === "" || !(args instanceof Map)) return null;
  return { name, arguments: pythonJson(args) };
}

class Segments {
  constructor(readonly ids: InklingIds, readonly decode: (ids: number[]) => Promise<string>) {}

  /** Whether a segment's ids (opener skipped) start a call: no content marker first. */
  isCall(seg: readonly number[]): boolean {
    const body = seg[0] === this.ids.model ? seg.slice(1) : seg;
    return body.length > 0 && body[0] !== this.ids.thinking && body[0] !== this.ids.text;
  }

  /** One segment's ids (its `<|end_message|>` removed). */
  async read(seg: number[]): Promise<Segment> {
    const body = seg[0] === this.ids.model ? seg.slice(1) : seg;
    if (body.length === 0) return { kind: "empty" };
    if (body[0] === this.ids.thinking) {
      return { kind: "reasoning", text: await this.decode(body.slice(1)) };
    }
    if (body[0] === this.ids.text) return { kind: "text", text: await this.decode(body.slice(1)) };
    const marker = body.indexOf(this.ids.invoke);
    const call = marker < 0 ? null : readCall(await this.decode(body.slice(marker + 1)));
    return call ? { kind: "call", call } : { kind: "malformed", text: await this.decode(body) };
  }

  /**
   * Segment `at` of `segs`, a call's joined with the segments after it (their
   * `<|end_message|>`s back in) until its payload parses: the segment and the index after it.
   */
  async readAt(
    segs: number[][],
    at: number,
  ): Promise<{ segment: Segment; ids: number; next: number }> {
    const first = await this.read(segs[at]);
    if (first.kind !== "malformed" || !this.isCall(segs[at])) {
      return { segment: first, ids: segs[at].length, next: at + 1 };
    }
    let joined = segs[at];
    for (let j = at + 1; j < segs.length && j - at <= MAX_ENDS; j++) {
      joined = [...joined, this.ids.end, ...segs[j]];
      const s = await this.read(joined);
      if (s.kind === "call") return { segment: s, ids: joined.length, next: j + 1 };
    }
    return { segment: first, ids: segs[at].length, next: at + 1 };
  }

  /** The ids without trailing stop ids, cut into segments (the last may be unterminated). */
  split(ids: readonly number[]): { done: number[][]; rest: number[] } {
    let n = ids.length;
    while (n > 0 && this.ids.stops.includes(ids[n - 1])) n--;
    const done: number[][] = [];
    let from = 0;
    for (let i = 0; i < n; i++) {
      if (ids[i] !== this.ids.end) continue;
      done.push(ids.slice(from, i) as number[]);
      from = i + 1;
    }
    return { done, rest: ids.slice(from, n) as number[] };
  }
}

class InklingParser implements OutputParser {
  readonly name = "inkling";
  constructor(readonly segments: Segments) {}

  async parse(ids: readonly number[], newToolCallId: () => string): Promise<ParsedOutput> {
    const { done, rest } = this.segments.split(ids);
    let reasoning: string | undefined, content = "", malformed = 0, reasoningTokens = 0;
    const toolCalls: ToolCall[] = [];
    const segs = [...done, ...(rest.length > 0 ? [rest] : [])];
    for (let at = 0; at < segs.length;) {
      const { segment: s, ids: used, next } = await this.segments.readAt(segs, at);
      at = next;
      if (s.kind === "reasoning") {
        reasoning = (reasoning ?? "") + s.text;
        reasoningTokens += used + 1;
      } else if (s.kind === "text") content += s.text;
      else if (s.kind === "call") toolCalls.push({ id: newToolCallId(), ...s.call });
      else if (s.kind === "malformed") {
        content += s.text;
        malformed++;
      }
    }
    const message: ParsedOutput["message"] = { role: "assistant", content };
    if (reasoning !== undefined) message.reasoning_content = reasoning;
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    return { message, malformedToolCalls: malformed, reasoningTokens };
  }
}

/** Sends each completed reasoning or text segment, until the first call segment. */
class InklingStreamParser implements StreamingOutputParser {
  #open: number[] = [];
  #calls = false;
  #queue: Promise<unknown> = Promise.resolve();
  constructor(readonly segments: Segments) {}

  push(ids: number[]): Promise<StreamDeltas> {
    const run = this.#queue.then(() => this.#push(ids));
    this.#queue = run.catch(() => {});
    return run;
  }

  async #push(ids: number[]): Promise<StreamDeltas> {
    const out = { reasoning: "", text: "" };
    for (const id of ids) {
      if (id !== this.segments.ids.end) {
        this.#open.push(id);
        continue;
      }
      const seg = this.#open;
      this.#open = [];
      this.#calls ||= this.segments.isCall(seg);
      if (this.#calls) continue;
      const s = await this.segments.read(seg);
      if (s.kind === "reasoning") out.reasoning += s.text;
      else if (s.kind === "text") out.text += s.text;
    }
    return out;
  }
}

/** Parser and streaming parser of Inkling output. */
export function inklingOutputFormat(
  ids: InklingIds,
  decode: (ids: number[]) => Promise<string>,
): OutputFormat {
  const segments = new Segments(ids, decode);
  return {
    parser: new InklingParser(segments),
    streamingParser: () => new InklingStreamParser(segments),
  };
}
