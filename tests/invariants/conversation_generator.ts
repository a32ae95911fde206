/**
 * A seeded random generator of agent conversations in the canonical message form, together with
 * the exact text a Qwen3 policy "sampled" for every assistant turn.
 *
 * Each conversation has an optional system prompt (sometimes several leading system messages,
 * which the gateway folds into one), 0–4 function tools with JSON schemas, user messages,
 * assistant turns (reasoning, content, 0–3 tool calls), tool results (multi-line, unicode, code,
 * empty, CRLF, text that looks like added tokens), several tool-call loops and occasional new
 * user turns (sometimes preceded by a mid-conversation system message).
 *
 * The sampled text of an assistant turn is what the Qwen3 template renders for that message as
 * the last message of a conversation:
 *
 * ```
 * <think>\nREASONING\n</think>\n\nCONTENT[\n]<tool_call>\n{"name": "N", "arguments": ARGS}\n</tool_call>…<|im_end|>
 * ```
 *
 * Tool-call arguments are raw strings in Python `json.dumps` style (`{"a": 1, "b": "x"}`, with
 * `ensure_ascii` on or off per conversation), so number spellings such as `1.0` or `2.5e-3` are
 * kept verbatim and never re-serialized.
 *
 * What the generator deliberately avoids, and why:
 *
 * - **Float literals such as `1.0` and integer-like object keys such as `"2"` in tool schemas.**
 *   These are known differences between `@huggingface/jinja` and Python Jinja2's `tojson`
 *   (`reference/tokenizers-and-templates.md` §8): JS cannot tell `1.0` from `1` and moves
 *   integer-like keys ahead of the others. Tool schemas here are JS values that reach Python via
 *   `JSON.stringify`, which would hide the difference instead of testing it, so they are left out.
 * - **Rules of the template that are not prefix-stable by design**, outside the turns flagged as
 *   such: tool-call turns always have non-empty reasoning (the template drops empty reasoning of
 *   a non-final assistant message), assistant text never starts with `\n` (the template strips
 *   it), and assistant text is NFC (the tokenizer normalizes, so non-NFC sampled text cannot be
 *   what a policy emitted). Non-NFC text appears in user and tool messages.
 * - **Special-token text in assistant output and user messages**; tool results sometimes carry
 *   it (grep output of a repository that mentions `<think>` or `<|im_end|>`), which both
 *   tokenizers turn into the added tokens, as Python does.
 * - Lone UTF-16 surrogates (Python cannot represent them).
 *
 * @module
 */
import type { AssistantMessage, Message, ToolCall, ToolSpec } from "../../canonical/mod.ts";
import { type ArgValue, Num, pythonJson, qwen3SampledText } from "../../model/mod.ts";
import {
  CODE_SNIPPETS,
  paragraph,
  prose,
  reasoning,
  Rng,
  sentence,
  systemPrompt,
  TOOL_NAMES,
  toolResult,
  UNICODE_NFC,
  userMessage,
} from "./random_text.ts";

export { Rng } from "./random_text.ts";
export { pythonJson, pythonString, qwen3SampledText } from "../../model/mod.ts";

/** One assistant turn of a generated conversation: one request to the gateway. */
export interface GeneratedTurn {
  /** Index in `messages` of the assistant message this turn samples; its history is before it. */
  index: number;
  /** The exact text the policy sampled, `<|im_end|>` included. */
  sampledText: string;
  /**
   * The template is prefix-stable at this turn: it is the first turn, or only tool (and system)
   * messages came after the previous assistant turn (inside a tool loop), so the full render of
   * this history extends the full render of the previous one + the previous sampled text.
   */
  prefixStable: boolean;
  /**
   * A full render of the history keeps every earlier sampled text verbatim: no earlier assistant
   * turn lies before the last user message (whose reasoning the template drops). Where this
   * holds, the gateway's delta-built prompt equals a full render.
   */
  reasoningKept: boolean;
}

/** Options for families other than Qwen3; without them the generator is what it always was. */
export interface GeneratorOptions {
  /**
   * Strings holding the family's own markup (`</parameter>`, `<|call|>`, …), mixed into string
   * argument values: a parser must not cut them short nor take them for structure.
   */
  markup?: readonly string[];
  /**
   * Arguments follow each tool's schema (strings, integers, floats, booleans, enums, arrays,
   * nested objects), so formats that type argument values by schema (XML calls) parse back to
   * the same values. Schemas gain a `number` kind.
   */
  typedArguments?: boolean;
  /**
   * The id of the `n`-th tool call of a conversation calling `name` (default `call_SEED_n`); Kimi
   * K2 writes its own ids into the prompt (`functions.NAME:n`) and reads the name back from them.
   */
  toolCallId?: (name: string, n: number) => string;
  /**
   * Parallel results sometimes come back in reverse call order (as an agent may send them), for
   * formats whose template writes them in call order (DeepSeek V4, GLM-5.3).
   */
  resultsOutOfOrder?: boolean;
  /** One call per assistant turn (Llama 3's template takes no more). */
  singleCall?: boolean;
}

export interface GeneratedConversation {
  seed: number;
  tools: ToolSpec[];
  /** The whole conversation, canonical, assistant messages included. */
  messages: Message[];
  turns: GeneratedTurn[];
  /** Whether tool-call arguments were written with Python's default `ensure_ascii=True`. */
  ensureAscii: boolean;
}

// ---------------------------------------------------------------------------------------------
// Tools and arguments

const PARAM_NAMES = [
  "path",
  "command",
  "query",
  "content",
  "city",
  "limit",
  "recursive",
  "pattern",
  "timeout_ms",
  "old_text",
  "new_text",
  "url",
  "options",
  "tags",
];

function schemaFor(rng: Rng, name: string, typed: boolean): unknown {
  const kinds = typed
    ? ["string", "string", "integer", "number", "boolean", "enum", "array", "object"] as const
    : ["string", "integer", "boolean", "enum", "array", "object"] as const;
  const properties: Record<string, unknown> = {};
  const n = rng.int(0, 4);
  for (let i = 0; i < n; i++) {
    const p = rng.pick(PARAM_NAMES);
    if (p in properties) continue;
    const kind = rng.pick(kinds);
    const desc = rng.chance(0.6) ? { description: sentence(rng, UNICODE_NFC) } : {};
    switch (kind) {
      case "string":
        properties[p] = { type: "string", ...desc, ...(rng.chance(0.2) ? { default: "" } : {}) };
        break;
      case "integer":
        properties[p] = {
          type: "integer",
          ...desc,
          minimum: rng.pick([0, 1, -1]),
          ...(rng.chance(0.3) ? { maximum: rng.pick([100, 65535, 120000]) } : {}),
          ...(rng.chance(0.2) ? { default: null } : {}),
        };
        break;
      case "number":
        properties[p] = { type: "number", ...desc };
        break;
      case "boolean":
        properties[p] = { type: "boolean", ...desc, default: rng.chance(0.5) };
        break;
      case "enum":
        properties[p] = { type: "string", enum: ["fast", "slow", "über", 'a"b'] };
        break;
      case "array":
        properties[p] = { type: "array", items: { type: "string" }, maxItems: 8, ...desc };
        break;
      case "object":
        properties[p] = {
          type: "object",
          properties: { depth: { type: "integer" }, follow: { type: "boolean" } },
          additionalProperties: false,
        };
        break;
    }
  }
  const keys = Object.keys(properties);
  const schema: Record<string, unknown> = { type: "object", properties };
  if (keys.length > 0 && rng.chance(0.7)) schema.required = keys.slice(0, rng.int(1, keys.length));
  if (name === "bash" && rng.chance(0.5)) {
    schema.$schema = "http://json-schema.org/draft-07/schema#";
  }
  return schema;
}

function toolDescription(rng: Rng): string | undefined {
  return rng.weighted<() => string | undefined>([
    [5, () => sentence(rng, UNICODE_NFC)],
    [
      2,
      () => prose(rng, UNICODE_NFC, 2) + '\n\nUsage: call with "path" </tools> is plain text here.',
    ],
    [1, () => undefined],
  ])();
}

function makeTools(rng: Rng, typed: boolean): ToolSpec[] {
  const count = rng.weighted([[2, 0], [3, 1], [3, 2], [2, 3], [2, 4]] as const);
  const names = new Set<string>();
  while (names.size < count) names.add(rng.pick(TOOL_NAMES));
  return [...names].map((name) => {
    const t: ToolSpec = { name, kind: "function", parameters: schemaFor(rng, name, typed) };
    const d = toolDescription(rng);
    if (d !== undefined) t.description = d;
    return t;
  });
}

function argValue(rng: Rng, depth: number): ArgValue {
  return rng.weighted<() => ArgValue>([
    [5, () => rng.pick(["src/main.py", "ls -la | grep foo", "README.md", "", " spaced "])],
    [3, () => sentence(rng, UNICODE_NFC)],
    [1, () => 'quote " backslash \\ tab \t newline \n done'],
    [1, () => rng.pick(CODE_SNIPPETS)],
    [3, () => new Num(rng.pick(["0", "1", "42", "-3", "3.14", "1.0", "2.5e-3", "100000", "-0.5"]))],
    [2, () => rng.chance(0.5)],
    [1, () => null],
    [
      depth < 2 ? 1 : 0,
      () => Array.from({ length: rng.int(0, 3) }, () => argValue(rng, depth + 1)),
    ],
    [depth < 2 ? 1 : 0, () => argObject(rng, depth + 1)],
  ])();
}

function argObject(rng: Rng, depth: number): { [key: string]: ArgValue } {
  const out: { [key: string]: ArgValue } = {};
  const n = rng.int(0, depth === 0 ? 4 : 2);
  for (let i = 0; i < n; i++) {
    out[
      rng.chance(0.9) ? rng.pick(PARAM_NAMES) : rng.pick(["ключ", "clé", "key with space", 'k"q'])
    ] = argValue(rng, depth);
  }
  return out;
}

/** A string argument value: ordinary, edge whitespace, or the family's markup. */
function stringValue(rng: Rng, markup: readonly string[]): string {
  return rng.weighted<() => string>([
    [5, () => rng.pick(["src/main.py", "ls -la | grep foo", "README.md", "", "x"])],
    [3, () => sentence(rng, UNICODE_NFC)],
    [1, () => 'quote " backslash \\ tab \t newline \n done'],
    [1, () => rng.pick(CODE_SNIPPETS)],
    [1, () => rng.pick(["\nleading newline", "trailing newline\n", "\n", "  padded  ", "\n\n"])],
    [markup.length > 0 ? 3 : 0, () => rng.pick(markup)],
  ])();
}

/** A value of the type `schema` declares (see `schemaFor`). */
function typedValue(
  rng: Rng,
  schema: Record<string, unknown>,
  markup: readonly string[],
): ArgValue {
  switch (schema.type) {
    case "integer":
      return new Num(rng.pick(["0", "1", "42", "-3", "100000", "65535"]));
    case "number":
      return new Num(rng.pick(["3.14", "1.0", "-0.5", "2.5", "0.001", "1e-05", "12.0", "7"]));
    case "boolean":
      return rng.chance(0.5);
    case "array":
      return Array.from({ length: rng.int(0, 3) }, () => stringValue(rng, markup));
    case "object":
      return rng.chance(0.5)
        ? { depth: new Num(String(rng.int(0, 9))), follow: rng.chance(0.5) }
        : {
          depth: new Num("2"),
          follow: false,
          nested: { k: [new Num("1.5"), null, "v"], "ключ": { deep: true } },
        };
    default:
      if (Array.isArray(schema.enum)) return rng.pick(schema.enum as string[]);
      return stringValue(rng, markup);
  }
}

/** Arguments for `tool` that follow its schema (each property present with probability 0.8). */
function typedArguments(rng: Rng, tool: ToolSpec, markup: readonly string[]) {
  const props = (tool.parameters as { properties?: Record<string, Record<string, unknown>> })
    .properties ?? {};
  const out: { [key: string]: ArgValue } = {};
  for (const [key, schema] of Object.entries(props)) {
    if (rng.chance(0.8)) out[key] = typedValue(rng, schema, markup);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Assistant turns

function assistantWithCalls(
  rng: Rng,
  tools: ToolSpec[],
  ensureAscii: boolean,
  nextId: (name: string) => string,
  options: GeneratorOptions,
): AssistantMessage {
  const drawn = rng.weighted([[5, 1], [2, 2], [1, 3]] as const);
  const count = options.singleCall ? 1 : drawn;
  const calls: ToolCall[] = Array.from({ length: count }, () => {
    const tool = rng.pick(tools);
    const args = options.typedArguments
      ? typedArguments(rng, tool, options.markup ?? [])
      : argObject(rng, 0);
    return { id: nextId(tool.name), name: tool.name, arguments: pythonJson(args, ensureAscii) };
  });
  const content = rng.weighted(
    [
      [5, () => ""],
      [4, () => sentence(rng, UNICODE_NFC)],
      [1, () => paragraph(rng, UNICODE_NFC) + "\n"],
    ] as const,
  )();
  return { role: "assistant", content, reasoning_content: reasoning(rng), tool_calls: calls };
}

function finalAnswer(rng: Rng): AssistantMessage {
  const content = rng.weighted(
    [
      [8, () => prose(rng, UNICODE_NFC, 3)],
      [1, () => ""],
      [1, () => " " + sentence(rng, UNICODE_NFC) + "\n"],
    ] as const,
  )();
  // An empty reasoning block is fine here: a final answer is always followed by a user turn,
  // after which the template drops the reasoning anyway.
  return {
    role: "assistant",
    content,
    reasoning_content: rng.chance(0.1) ? "" : reasoning(rng),
  };
}

// ---------------------------------------------------------------------------------------------
// Conversations

/** A deterministic conversation for `seed`. */
export function generateConversation(
  seed: number,
  options: GeneratorOptions = {},
): GeneratedConversation {
  const rng = new Rng(seed);
  const typed = options.typedArguments === true;
  const tools = makeTools(rng, typed);
  // Typed formats write strings raw, so the JSON spelling of the arguments is the parser's own.
  const ensureAscii = rng.chance(0.3) && !typed;
  const messages: Message[] = [];
  const turns: GeneratedTurn[] = [];
  let idCounter = 0;
  const nextId = (name: string) =>
    options.toolCallId?.(name, idCounter++) ?? `call_${seed}_${idCounter++}`;
  /** Whether a user message was added since the last assistant message. */
  let userSinceAssistant = false;
  /** Whether a user message came after some assistant message. */
  let userAfterAssistant = false;
  const addAssistant = (m: AssistantMessage) => {
    turns.push({
      index: messages.length,
      sampledText: qwen3SampledText(m),
      prefixStable: turns.length === 0 || !userSinceAssistant,
      reasoningKept: !userAfterAssistant,
    });
    messages.push(m);
    userSinceAssistant = false;
  };

  if (rng.chance(0.65)) {
    messages.push({ role: "system", content: systemPrompt(rng) });
    if (rng.chance(0.15)) messages.push({ role: "system", content: systemPrompt(rng) });
  }
  const episodes = rng.weighted([[4, 1], [3, 2], [2, 3]] as const);
  for (let e = 0; e < episodes; e++) {
    if (e > 0 && rng.chance(0.1)) {
      messages.push({ role: "system", content: sentence(rng, UNICODE_NFC) });
    }
    messages.push({ role: "user", content: userMessage(rng) });
    userSinceAssistant = true;
    userAfterAssistant ||= turns.length > 0;
    const loops = tools.length === 0 ? 0 : rng.weighted([[2, 0], [3, 1], [3, 2], [2, 3]] as const);
    for (let l = 0; l < loops; l++) {
      const a = assistantWithCalls(rng, tools, ensureAscii, nextId, options);
      addAssistant(a);
      const lastOfAll = e === episodes - 1 && l === loops - 1;
      if (lastOfAll && rng.chance(0.15)) return { seed, tools, messages, turns, ensureAscii };
      const results = a.tool_calls!.map((call) => {
        const m: Message = { role: "tool", content: toolResult(rng), tool_call_id: call.id };
        if (rng.chance(0.3)) m.name = call.name;
        return m;
      });
      if (options.resultsOutOfOrder && results.length > 1 && rng.chance(0.5)) results.reverse();
      messages.push(...results);
      // A mid-loop system message (a harness reminder): still prefix-stable.
      if (rng.chance(0.05)) messages.push({ role: "system", content: sentence(rng, UNICODE_NFC) });
    }
    addAssistant(finalAnswer(rng));
  }
  return { seed, tools, messages, turns, ensureAscii };
}

/** `count` conversations with seeds `firstSeed`, `firstSeed + 1`, … */
export function* generateConversations(
  firstSeed: number,
  count: number,
  options: GeneratorOptions = {},
): Generator<GeneratedConversation> {
  for (let i = 0; i < count; i++) yield generateConversation(firstSeed + i, options);
}
