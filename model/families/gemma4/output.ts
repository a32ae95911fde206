/**
 * Gemma 4's output: an optional thought channel (`<|channel>thought\nR<channel|>`), then text and
 * calls `<|tool_call>call:NAME{ARGS}<tool_call|>` (arguments in Gemma's syntax: unquoted keys,
 * strings between `<|"|>` tokens), ended by `<turn|>` or, after calls, by `<|tool_response>`. The
 * text around calls is joined and trimmed; a call ends at the first `<tool_call|>` its body parses
 * to (a string argument may hold one); a call that does not parse stays in the text and is counted
 * as malformed. Arguments become JSON as Python's `json.dumps` writes them, keys in the
 * order sampled.
 *
 * Streaming sends the reasoning and text once the output ends (a stop id): the text that a later
 * call or thought marker would move is never sent early.
 *
 * @module
 */
import type { AssistantMessage, ToolCall } from "../../../canonical/mod.ts";
import type {
  OutputParser,
  ParsedOutput,
  StreamDeltas,
  StreamingOutputParser,
} from "../../parsers/mod.ts";
import { Num, pythonJsonDumps, pythonStrip } from "../../python_json.ts";
import type { OutputFormat } from "../family.ts";
import { GEMMA } from "./render.ts";

/** `<tool_call|>`s tried as the end of one call before it counts as malformed. */
const MAX_ENDS = 64;

type Parsed = string | boolean | null | Num | Parsed[] | Map<string, Parsed>;

/** Gemma's argument syntax → a JSON value, or null when it does not parse. */
export function parseGemmaValue(text: string): Parsed | undefined {
  let i = 0;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i])) i++;
  };
  const fail = (): never => {
    throw new Error("gemma value");
  };
  const value = (): Parsed => {
    ws();
    if (text.startsWith(GEMMA.quote, i)) {
      const end = text.indexOf(GEMMA.quote, i + GEMMA.quote.length);
      if (end < 0) fail();
      const s = text.slice(i + GEMMA.quote.length, end);
      i = end + GEMMA.quote.length;
      return s;
    }
    if (text[i] === "{") {
      i++;
      const out = new Map<string, Parsed>();
      ws();
      if (text[i] === "}") return i++, out;
      for (;;) {
        ws();
        let key: string;
        if (text.startsWith(GEMMA.quote, i)) key = value() as string;
        else {
          const from = i;
          while (i < text.length && !":,{}[]".includes(text[i])) i++;
          key = text.slice(from, i).trim();
          if (!key) fail();
        }
        ws();
        if (text[i++] !== ":") fail();
        out.set(key, value());
        ws();
        const c = text[i++];
        if (c === "}") return out;
        if (c !== ",") fail();
      }
    }
    if (text[i] === "[") {
      i++;
      const out: Parsed[] = [];
      ws();
      if (text[i] === "]") return i++, out;
      for (;;) {
        out.push(value());
        ws();
        const c = text[i++];
        if (c === "]") return out;
        if (c !== ",") fail();
      }
    }
    const from = i;
    while (i < text.length && !",}]".includes(text[i])) i++;
    const raw = text.slice(from, i).trim();
    if (raw === "true" || raw === "false") return raw === "true";
    if (raw === "null") return null;
    if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(raw)) return new Num(raw);
    if (!raw) fail();
    return raw;
  };
  try {
    const v = value();
    ws();
    return i === text.length ? v : undefined;
  } catch {
    return undefined;
  }
}

/** One call's body (between its markers): the call, or null. */
function readCall(body: string): Omit<ToolCall, "id"> | null {
  const b = body.trim();
  if (!b.startsWith("call:") || !b.endsWith("}")) return null;
  const open = b.indexOf("{");
  const name = b.slice(5, open).trim();
  const args = parseGemmaValue(b.slice(open));
  if (!name || !(args instanceof Map)) return null;
  return { name, arguments: pythonJsonDumps(args) };
}

export interface GemmaOutputIds {
  channel: number;
  channelEnd: number;
  stops: readonly number[];
}

class GemmaParser implements OutputParser {
  readonly name = "gemma4";
  constructor(readonly ids: GemmaOutputIds, readonly decode: (ids: number[]) => Promise<string>) {}

  async parse(sampled: readonly number[], newToolCallId: () => string): Promise<ParsedOutput> {
    let n = sampled.length;
    while (n > 0 && this.ids.stops.includes(sampled[n - 1])) n--;
    let ids = sampled.slice(0, n);
    let reasoning: string | undefined, reasoningTokens = 0;
    if (ids[0] === this.ids.channel) {
      const close = ids.indexOf(this.ids.channelEnd);
      const end = close < 0 ? ids.length : close;
      reasoning = pythonStrip((await this.decode(ids.slice(1, end))).replace(/^thought\n/, ""));
      reasoningTokens = Math.min(ids.length, end + 1);
      ids = ids.slice(reasoningTokens);
    }
    const text = await this.decode(ids as number[]);
    const toolCalls: ToolCall[] = [];
    let content = "", malformed = 0, at = 0;
    for (let s = text.indexOf(GEMMA.toolCall); s >= 0; s = text.indexOf(GEMMA.toolCall, at)) {
      // A string argument may hold `<tool_call|>`: the call ends at the first one its body parses to.
      let e = text.indexOf(GEMMA.toolCallEnd, s), call = null;
      for (let n = 0; e >= 0 && n < MAX_ENDS; e = text.indexOf(GEMMA.toolCallEnd, e + 1), n++) {
        call = readCall(text.slice(s + GEMMA.toolCall.length, e));
        if (call) break;
      }
      if (!call) {
        malformed++;
        break;
      }
      content += text.slice(at, s);
      toolCalls.push({ id: newToolCallId(), ...call });
      at = e + GEMMA.toolCallEnd.length;
    }
    content = pythonStrip(content + text.slice(at));
    const message: AssistantMessage = { role: "assistant", content };
    if (reasoning !== undefined) message.reasoning_content = reasoning;
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    return { message, malformedToolCalls: malformed, reasoningTokens };
  }
}

/**
 * Holds the output until it ends in a stop id, then sends what the complete parse gives (once: an
 * engine stops there, and ids after a stop would be text the parse could read otherwise).
 */
class GemmaStreamParser implements StreamingOutputParser {
  #ids: number[] = [];
  #sent = false;
  #queue: Promise<unknown> = Promise.resolve();
  constructor(readonly parser: GemmaParser) {}

  push(ids: number[]): Promise<StreamDeltas> {
    const run = this.#queue.then(() => this.#push(ids));
    this.#queue = run.catch(() => {});
    return run;
  }

  async #push(ids: number[]): Promise<StreamDeltas> {
    this.#ids.push(...ids);
    const last = this.#ids.at(-1);
    if (this.#sent || last === undefined || !this.parser.ids.stops.includes(last)) {
      return { reasoning: "", text: "" };
    }
    const { message } = await this.parser.parse(this.#ids, () => "");
    this.#sent = true;
    return { reasoning: message.reasoning_content ?? "", text: message.content };
  }
}

/** Parser and streaming parser of Gemma 4 output. */
export function gemmaOutputFormat(
  ids: GemmaOutputIds,
  decode: (ids: number[]) => Promise<string>,
): OutputFormat {
  const parser = new GemmaParser(ids, decode);
  return { parser, streamingParser: () => new GemmaStreamParser(parser) };
}
