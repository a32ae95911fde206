/**
 * Seeded random text for generated agent conversations: a deterministic RNG, word and unicode
 * pools (NFC-stable and not), code snippets, and builders for system prompts, user messages,
 * reasoning and tool results.
 *
 * @module
 */

/**
 * mulberry32: small, fast, deterministic; the one seeded generator of the tests and benches
 * (property tests draw from fast-check, whose seeds replay).
 */
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

/** `Rng(seed).next` as a function. */
export function rng(seed: number): () => number {
  const r = new Rng(seed);
  return () => r.next();
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
export const UNICODE_NFC = [
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

export const CODE_SNIPPETS = [
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

export const TOOL_NAMES = [
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

export function sentence(rng: Rng, unicode: readonly string[]): string {
  const n = rng.int(3, 14);
  const words: string[] = [];
  for (let i = 0; i < n; i++) {
    words.push(rng.chance(0.12) ? rng.pick(unicode) : rng.pick(WORDS));
  }
  let s = words.join(rng.chance(0.05) ? "  " : " ");
  s = s[0].toUpperCase() + s.slice(1);
  return s + rng.pick([".", ".", ".", "?", "!", ":", "…", ""]);
}

export function paragraph(rng: Rng, unicode: readonly string[], maxSentences = 4): string {
  const n = rng.int(1, maxSentences);
  return Array.from({ length: n }, () => sentence(rng, unicode)).join(" ");
}

/** Free text with paragraphs and, sometimes, a fenced code block. */
export function prose(rng: Rng, unicode: readonly string[], maxParagraphs = 3): string {
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

export function systemPrompt(rng: Rng): string {
  return rng.pick([
    "You are a helpful coding agent.",
    "You are Claude Code, an interactive CLI tool.\n\n# Rules\n- Be concise.\n- Use tools.",
    "You are a coding agent running in a sandbox. Current date: 2026-01-01.\n" +
    prose(rng, UNICODE_NFC, 2),
    prose(rng, ALL_UNICODE, 3),
  ]);
}

export function userMessage(rng: Rng): string {
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

export function reasoning(rng: Rng): string {
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

export function toolResult(rng: Rng): string {
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
