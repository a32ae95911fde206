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
import type { AssistantMessage, Message, ToolCall, ToolSpec } from "../../model/messages.ts";

/** mulberry32: small, fast, deterministic. */
export class Rng {
  #state: number;
  constructor(seed: number) {
    this.#state = (seed >>> 0) ^ 0x6d2b79f5;
  }
  /** Uniform in [0, 1). */
  next(): number {
    let t = this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Integer in [lo, hi], both included. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }
  /** Picks by weight: `[[weight, value], …]`. */
  weighted<T>(choices: readonly (readonly [number, T])[]): T {
    const total = choices.reduce((n, [w]) => n + w, 0);
    let r = this.next() * total;
    for (const [w, v] of choices) {
      if ((r -= w) < 0) return v;
    }
    return choices[choices.length - 1][1];
  }
}

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
// Text pools

const WORDS = [
  "the",
  "file",
  "function",
  "returns",
  "value",
  "error",
  "test",
  "config",
  "build",
  "path",
  "module",
  "import",
  "update",
  "check",
  "list",
  "data",
  "user",
  "query",
  "result",
  "fix",
  "bug",
  "line",
  "parser",
  "token",
  "render",
  "async",
  "await",
  "cache",
  "branch",
  "commit",
  "diff",
  "patch",
  "index",
  "schema",
  "request",
  "response",
  "server",
  "client",
  "timeout",
  "retry",
  "should",
  "we",
  "I",
  "it",
  "and",
  "or",
  "not",
  "with",
  "from",
  "into",
  "then",
  "first",
  "next",
  "again",
  "maybe",
  "because",
  "looks",
  "like",
  "missing",
  "wrong",
  "works",
  "fails",
  "passes",
  "don't",
  "can't",
  "it's",
  "we'll",
  "x86_64",
  "utf-8",
  "v2.3.1",
  "404",
  "2024",
  "3.14",
  "0x1F",
  "e.g.",
  "i.e.",
  "foo_bar",
  "camelCase",
  "snake_case",
  "README.md",
  "src/main.ts",
  "--verbose",
];

/** NFC-stable text in many scripts (safe in assistant output). */
const UNICODE_NFC = [
  "café",
  "naïve",
  "Größe",
  "日本語のテキスト",
  "中文字符",
  "한국어",
  "Ελληνικά",
  "русский текст",
  "emoji 🚀",
  "👩‍💻",
  "😶‍🌫️",
  "✓",
  "→",
  "—",
  "€42",
  "½",
  "ﬁle",
  "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
  "ａｂｃ",
  "non\u00a0breaking",
  "a\u2028b",
  "∑∫√",
  "עברית",
  "العربية",
  "हिन्दी",
  "ไทย",
];

/** Text that NFC normalization changes (only in user and tool messages). */
const UNICODE_NON_NFC = [
  "e\u0301",
  "\uF900\uF901",
  "\u2126hm",
  "A\u030Angstr\u00f6m",
  "\u1100\u1161",
];

const CODE_SNIPPETS = [
  "def add(a, b):\n    return a + b\n",
  "for (let i = 0; i < n; i++) {\n\tsum += xs[i] * 2;\n}",
  'if x < 10 and y > 3:\n    print(f"{x!r} -> {y}")',
  "#!/usr/bin/env bash\nset -euo pipefail\necho \"$HOME\" | tr 'a-z' 'A-Z'",
  'const re = /\\s+$/gm; // trailing spaces   \nconst s = "a\\\\b";',
  "SELECT id, name FROM users WHERE name LIKE '%ö%' ORDER BY id DESC;",
  "@@ -1,3 +1,4 @@\n import os\n-import sys\n+import sys, re\n+\n def main():",
  "class Foo<T> implements Bar {\n  #x: T;\n  get x(): T { return this.#x; }\n}",
  "    indented four\n\ttab indented\n  \n",
  '{\n  "name": "rollgate",\n  "version": "0.1.0"\n}',
];

const TOOL_NAMES = [
  "bash",
  "read_file",
  "write_file",
  "edit_file",
  "search",
  "list_dir",
  "get_weather",
  "web_fetch",
  "run_tests",
  "git_diff",
];

// ---------------------------------------------------------------------------------------------
// Text builders

function sentence(rng: Rng, unicode: readonly string[]): string {
  const n = rng.int(3, 14);
  const words: string[] = [];
  for (let i = 0; i < n; i++) {
    words.push(rng.chance(0.12) ? rng.pick(unicode) : rng.pick(WORDS));
  }
  let s = words.join(rng.chance(0.05) ? "  " : " ");
  s = s[0].toUpperCase() + s.slice(1);
  return s + rng.pick([".", ".", ".", "?", "!", ":", "…", ""]);
}

function paragraph(rng: Rng, unicode: readonly string[], maxSentences = 4): string {
  const n = rng.int(1, maxSentences);
  return Array.from({ length: n }, () => sentence(rng, unicode)).join(" ");
}

/** Free text with paragraphs and, sometimes, a fenced code block. */
function prose(rng: Rng, unicode: readonly string[], maxParagraphs = 3): string {
  const parts: string[] = [];
  const n = rng.int(1, maxParagraphs);
  for (let i = 0; i < n; i++) {
    if (rng.chance(0.2)) {
      parts.push(
        "```" + rng.pick(["", "python", "ts", "bash"]) + "\n" + rng.pick(CODE_SNIPPETS) + "\n```",
      );
    } else {
      parts.push(paragraph(rng, unicode));
    }
  }
  return parts.join(rng.chance(0.7) ? "\n\n" : "\n");
}

const ALL_UNICODE = [...UNICODE_NFC, ...UNICODE_NON_NFC];

function systemPrompt(rng: Rng): string {
  return rng.pick([
    "You are a helpful coding agent.",
    "You are Claude Code, an interactive CLI tool.\n\n# Rules\n- Be concise.\n- Use tools.",
    "You are a coding agent running in a sandbox. Current date: 2026-01-01.\n" +
    prose(rng, UNICODE_NFC, 2),
    prose(rng, ALL_UNICODE, 3),
  ]);
}

function userMessage(rng: Rng): string {
  return rng.weighted(
    [
      [6, () => prose(rng, ALL_UNICODE, 3)],
      [2, () => sentence(rng, ALL_UNICODE)],
      [1, () => "Fix this:\n```\n" + rng.pick(CODE_SNIPPETS) + "\n```"],
      [0.3, () => ""],
      [0.5, () => "  leading spaces and trailing newline\n"],
    ] as const,
  )();
}

function reasoning(rng: Rng): string {
  // Non-empty, and no leading/trailing "\n" (the template strips those).
  const text = rng.weighted(
    [
      [5, () => paragraph(rng, UNICODE_NFC, 3)],
      [2, () => paragraph(rng, UNICODE_NFC, 2) + "\n\n" + paragraph(rng, UNICODE_NFC, 2)],
      [1, () => "Plan:\n1. " + sentence(rng, UNICODE_NFC) + "\n2. " + sentence(rng, UNICODE_NFC)],
      [0.5, () => "  " + sentence(rng, UNICODE_NFC) + "  "],
    ] as const,
  )();
  return text.replace(/^\n+|\n+$/g, "") || "Thinking.";
}

function toolResult(rng: Rng): string {
  return rng.weighted(
    [
      [4, () => prose(rng, ALL_UNICODE, 2)],
      [3, () => rng.pick(CODE_SNIPPETS)],
      [2, () => {
        const n = rng.int(1, 12);
        return Array.from(
          { length: n },
          (_, i) => `${String(i + 1).padStart(4)}\t${sentence(rng, ALL_UNICODE)}`,
        )
          .join("\n");
      }],
      [1, () => ""],
      [1, () => "  \n\t"],
      [1, () => "line one\r\nline two\r\n"],
      [
        1,
        () =>
          JSON.stringify({ ok: true, items: [1, 2, 3], msg: sentence(rng, ALL_UNICODE) }, null, 2),
      ],
      [1, () => "x".repeat(rng.int(50, 400)) + " " + "ab ".repeat(rng.int(5, 60))],
      [
        1,
        () =>
          'Traceback (most recent call last):\n  File "main.py", line 3, in <module>\n    main()\nValueError: bad',
      ],
      [
        0.5,
        () =>
          "docs/notes.md:12: the model writes <think> then </think>\ntools.md:3: wrap calls in <tool_call>",
      ],
      [0.3, () => "chat.log:1: <|im_start|>user\\nhi<|im_end|>"],
      [0.5, () => rng.pick(UNICODE_NON_NFC) + " " + rng.pick(UNICODE_NFC)],
    ] as const,
  )();
}

// ---------------------------------------------------------------------------------------------
// Tools and arguments

/** A JSON number written with its own spelling (Python would write `1.0`, not `1`). */
class Num {
  constructor(readonly text: string) {}
}
type ArgValue = Num | string | boolean | null | ArgValue[] | { [key: string]: ArgValue };

function hex4(code: number): string {
  return "\\u" + code.toString(16).padStart(4, "0");
}

/** A string literal as Python's `json.dumps` writes it. */
export function pythonString(s: string, ensureAscii: boolean): string {
  const json = JSON.stringify(s);
  return ensureAscii ? json.replace(/[\u0080-\uffff]/g, (c) => hex4(c.charCodeAt(0))) : json;
}

/**
 * A value as Python's `json.dumps` writes it: `", "` and `": "` separators. Numbers are written
 * as JS does, except `Num`s, which keep their own spelling.
 */
export function pythonJson(v: unknown, ensureAscii = false): string {
  if (v instanceof Num) return v.text;
  if (typeof v === "string") return pythonString(v, ensureAscii);
  if (v === null || typeof v !== "object") return String(v);
  if (Array.isArray(v)) return `[${v.map((x) => pythonJson(x, ensureAscii)).join(", ")}]`;
  const members = Object.entries(v).map(([k, x]) =>
    `${pythonString(k, ensureAscii)}: ${pythonJson(x, ensureAscii)}`
  );
  return `{${members.join(", ")}}`;
}

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

function schemaFor(rng: Rng, name: string): unknown {
  const kinds = ["string", "integer", "boolean", "enum", "array", "object"] as const;
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

function makeTools(rng: Rng): ToolSpec[] {
  const count = rng.weighted([[2, 0], [3, 1], [3, 2], [2, 3], [2, 4]] as const);
  const names = new Set<string>();
  while (names.size < count) names.add(rng.pick(TOOL_NAMES));
  return [...names].map((name) => {
    const t: ToolSpec = { name, kind: "function", parameters: schemaFor(rng, name) };
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

// ---------------------------------------------------------------------------------------------
// Assistant turns

/**
 * The text the Qwen3 template renders for `message` as the last assistant message (after
 * `<|im_start|>assistant\n`), `<|im_end|>` included: what a policy samples for it.
 */
export function qwen3SampledText(message: AssistantMessage): string {
  const content = message.content;
  let text = `<think>\n${message.reasoning_content ?? ""}\n</think>\n\n${content}`;
  (message.tool_calls ?? []).forEach((call, i) => {
    if (i > 0 || content) text += "\n";
    text += `<tool_call>\n{"name": "${call.name}", "arguments": ${call.arguments}}\n</tool_call>`;
  });
  return text + "<|im_end|>";
}

function assistantWithCalls(
  rng: Rng,
  tools: ToolSpec[],
  ensureAscii: boolean,
  nextId: () => string,
): AssistantMessage {
  const count = rng.weighted([[5, 1], [2, 2], [1, 3]] as const);
  const calls: ToolCall[] = Array.from({ length: count }, () => ({
    id: nextId(),
    name: rng.pick(tools).name,
    arguments: pythonJson(argObject(rng, 0), ensureAscii),
  }));
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
export function generateConversation(seed: number): GeneratedConversation {
  const rng = new Rng(seed);
  const tools = makeTools(rng);
  const ensureAscii = rng.chance(0.3);
  const messages: Message[] = [];
  const turns: GeneratedTurn[] = [];
  let idCounter = 0;
  const nextId = () => `call_${seed}_${idCounter++}`;
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
      const a = assistantWithCalls(rng, tools, ensureAscii, nextId);
      addAssistant(a);
      const lastOfAll = e === episodes - 1 && l === loops - 1;
      if (lastOfAll && rng.chance(0.15)) return { seed, tools, messages, turns, ensureAscii };
      for (const call of a.tool_calls!) {
        const m: Message = { role: "tool", content: toolResult(rng), tool_call_id: call.id };
        if (rng.chance(0.3)) m.name = call.name;
        messages.push(m);
      }
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
): Generator<GeneratedConversation> {
  for (let i = 0; i < count; i++) yield generateConversation(firstSeed + i);
}
