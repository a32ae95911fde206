/**
 * Reading gpt-oss output (harmony) back into an assistant message. The generation prompt ends in
 * `<|start|>assistant`, so the output is a sequence of messages, the first without `<|start|>`:
 * HEADER `<|message|>` BODY END, where END is `<|end|>`, `<|return|>` or `<|call|>`.
 *
 * - a header is read as harmony reads it: the channel after `<|channel|>`, the recipient
 *   (`to=…`) wherever it stands (before the channel or after it), a content type
 *   (`<|constrain|>json`, `json`) after it; later messages start with their role;
 * - `analysis` bodies are the reasoning; `final` and `commentary` bodies without a recipient
 *   (preambles before a call) are the content; several are joined with `\n`;
 * - a body addressed `to=functions.NAME` is a tool call when it is a JSON object (its text is
 *   kept verbatim as the arguments); whatever the end token (`<|call|>`, or `<|return|>` as
 *   models sometimes write), and however many calls follow one another;
 * - anything else that addresses a recipient (a body that is no JSON object, a recipient outside
 *   `functions`, a header that never reaches `<|message|>`) is a malformed call: counted, and its
 *   text (header and body, markup included) goes into the content, so the agent sees it;
 * - robust to what a sampler leaves: text after a call (more messages are read), ids outside any
 *   message (kept as content text), output cut off by `max_tokens` (the open message is read as
 *   far as it goes; a call the output ends inside whose arguments are not yet a JSON object is
 *   unfinished, not malformed: left out of the answer, so the agent gets the text before it and
 *   the length stop, never harmony markup as content).
 *
 * @module
 */
import type { AssistantMessage, ToolCall, ToolSpec } from "../../../canonical/mod.ts";
import type { OutputParser, ParsedOutput } from "../../parsers/mod.ts";
import type { HarmonyIds } from "./render.ts";

/** One message of the output, by id positions. */
export interface OutputMessage {
  /** Position of the `<|start|>` that opened it; -1 when the prompt or nothing opened it. */
  start: number;
  /** Whether the generation prompt opened it (the first message: its role is implicit). */
  promptOpened: boolean;
  /** Header ids `[from, to)`: up to `<|message|>`. */
  header: [number, number];
  /** Body ids `[from, to)` after `<|message|>`; null when the header never reached it. */
  body: [number, number] | null;
  /** The id that ended it, or null (cut off, or the next `<|start|>` came first). */
  end: number | null;
}

/** What a header says, read from its decoded text. */
export interface Header {
  role: string;
  channel?: string;
  recipient?: string;
  contentType?: string;
}

/** Splits output ids into messages (no decoding). */
export function splitMessages(ids: readonly number[], t: HarmonyIds): OutputMessage[] {
  const isEnd = (id: number) => id === t.end || id === t.return || id === t.call;
  const out: OutputMessage[] = [];
  let i = 0;
  let promptOpened = true;
  while (i < ids.length) {
    let start = -1;
    if (ids[i] === t.start) {
      start = i++;
      promptOpened = false;
    }
    const h = i;
    while (i < ids.length && ids[i] !== t.message && ids[i] !== t.start && !isEnd(ids[i])) i++;
    const message: OutputMessage = { start, promptOpened, header: [h, i], body: null, end: null };
    if (ids[i] === t.message) {
      const b = ++i;
      while (i < ids.length && ids[i] !== t.start && !isEnd(ids[i])) i++;
      message.body = [b, i];
    }
    if (i < ids.length && isEnd(ids[i])) message.end = ids[i++];
    if (message.start >= 0 || message.header[1] > h || message.body || message.end !== null) {
      out.push(message);
    }
    promptOpened = false;
  }
  return out;
}

/**
 * Reads a decoded header: `<|channel|>NAME` (up to white space or `<`), then the words: the role
 * (unless the prompt gave it), `to=RECIPIENT`, a content type after the recipient.
 */
export function readHeader(text: string, promptOpened: boolean): Header {
  const header: Header = { role: "assistant" };
  const at = text.indexOf("<|channel|>");
  if (at >= 0) {
    const after = text.slice(at + "<|channel|>".length);
    const len = after.search(/[\s<]/);
    header.channel = len < 0 ? after : after.slice(0, len);
    text = text.slice(0, at) + (len < 0 ? "" : after.slice(len));
  }
  const words = text.replaceAll("<|constrain|>", " <|constrain|>").trim().split(/\s+/).filter((
    w,
  ) => w !== "");
  if (!promptOpened && words.length > 0 && !words[0].startsWith("to=")) {
    header.role = words.shift()!;
  } else if (words[0] === "assistant") words.shift();
  for (const w of words) {
    if (w.startsWith("to=")) header.recipient = w.slice(3);
    else if (header.recipient !== undefined || w.startsWith("<|constrain|>")) {
      header.contentType = w;
    }
  }
  return header;
}

/** The tool a `functions.NAME` recipient calls (a `json` glued to the name undone), or null. */
function toolName(recipient: string, tools: readonly ToolSpec[]): string | null {
  if (!recipient.startsWith("functions.")) return null;
  const name = recipient.slice("functions.".length);
  if (name === "") return null;
  const offered = (n: string) => tools.some((t) => t.name === n);
  if (!offered(name) && name.endsWith("json") && offered(name.slice(0, -4))) {
    return name.slice(0, -4);
  }
  return name;
}

/** Whether `text` is a JSON object. */
function isJsonObject(text: string): boolean {
  try {
    const v = JSON.parse(text);
    return typeof v === "object" && v !== null && !Array.isArray(v);
  } catch {
    return false;
  }
}

/** What a message is for the assistant message. */
export type MessageKind = "reasoning" | "content" | "call" | "other";

/** The kind of a message whose header has been read (`call`: addressed to a recipient). */
export function messageKind(header: Header): MessageKind {
  if (header.role !== "assistant") return "other";
  if (header.recipient !== undefined) return "call";
  return header.channel === "analysis" ? "reasoning" : "content";
}

export class HarmonyParser implements OutputParser {
  readonly name = "openai";

  constructor(
    readonly ids: HarmonyIds,
    private readonly decode: (ids: number[]) => Promise<string>,
  ) {}

  async parse(
    ids: readonly number[],
    newToolCallId: () => string,
    tools: readonly ToolSpec[] = [],
  ): Promise<ParsedOutput> {
    const reasoning: string[] = [], content: string[] = [];
    const calls: ToolCall[] = [];
    let malformed = 0, reasoningTokens = 0;
    const text = (span: readonly [number, number]) => this.decode(ids.slice(span[0], span[1]));
    const messages = splitMessages(ids, this.ids);
    for (const [k, m] of messages.entries()) {
      const headerText = await text(m.header);
      const header = readHeader(headerText, m.promptOpened);
      const kind = messageKind(header);
      // The output ends inside a call (a length stop): the call is unfinished, not malformed,
      // and its harmony header is no answer text. It is left out; the stop reason says why.
      const cutOff = kind === "call" && m.end === null && k === messages.length - 1;
      if (m.body === null) {
        if (cutOff) continue;
        // A header that never reached its body: cut off, or text without any header.
        if (kind === "call") malformed++;
        if (kind === "call" || !ids.slice(m.header[0], m.header[1]).includes(this.ids.channel)) {
          if (headerText.trim() !== "") content.push(headerText);
        }
        continue;
      }
      const body = await text(m.body);
      if (kind === "reasoning") {
        reasoning.push(body);
        reasoningTokens += (m.end === null ? m.body[1] : m.body[1] + 1) -
          (m.start >= 0 ? m.start : m.header[0]);
      } else if (kind === "content") {
        content.push(body);
      } else {
        const name = kind === "call" ? toolName(header.recipient!, tools) : null;
        if (name !== null && isJsonObject(body)) {
          calls.push({ id: newToolCallId(), name, arguments: body });
        } else if (!cutOff) {
          if (kind === "call") malformed++;
          content.push(await text([m.header[0], m.body[1]]));
        }
      }
    }
    const message: AssistantMessage = { role: "assistant", content: content.join("\n") };
    if (reasoning.length > 0) message.reasoning_content = reasoning.join("\n");
    if (calls.length > 0) message.tool_calls = calls;
    return { message, malformedToolCalls: malformed, reasoningTokens };
  }
}
