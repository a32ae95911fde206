/**
 * JSON parsed the way Python's `json.loads` sees it, without loss: object keys in the order written
 * (a `Map`; JavaScript objects move integer-like keys such as `"2"` first), a repeated key keeps its
 * first position and its last value (as a Python dict does), and numbers keep their source text
 * (`1.0` is a float, `1` an int; `JSON.parse` cannot tell them apart).
 *
 * Templates that render tool-call arguments value by value (Qwen3.5's XML calls, GLM's
 * `<arg_value>`) need this to write what Python writes.
 *
 * @module
 */

import { Num } from "../python_json.ts";

/** A JSON value as Python's `json.loads` sees it: ordered objects, numbers with their text. */
export type JsonValue =
  | string
  | boolean
  | null
  | Num
  | JsonValue[]
  | Map<string, JsonValue>;

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const WHITESPACE = /[ \t\n\r]*/y;

class Parser {
  i = 0;
  constructor(readonly s: string) {}

  fail(what: string): never {
    throw new SyntaxError(`${what} at ${this.i} in JSON`);
  }

  ws(): void {
    WHITESPACE.lastIndex = this.i;
    WHITESPACE.test(this.s);
    this.i = WHITESPACE.lastIndex;
  }

  value(depth: number): JsonValue {
    if (depth > 512) this.fail("nesting too deep");
    this.ws();
    const c = this.s[this.i];
    if (c === "{") return this.object(depth);
    if (c === "[") return this.array(depth);
    if (c === '"') return this.string();
    for (const [word, v] of [["true", true], ["false", false], ["null", null]] as const) {
      if (this.s.startsWith(word, this.i)) {
        this.i += word.length;
        return v;
      }
    }
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.s);
    if (!m) this.fail("unexpected character");
    this.i += m[0].length;
    return new Num(m[0]);
  }

  string(): string {
    const start = this.i;
    for (this.i++; this.i < this.s.length; this.i++) {
      const c = this.s.charCodeAt(this.i);
      if (c === 0x5c) this.i++;
      else if (c === 0x22) {
        this.i++;
        // The literal is valid JSON here; the engine decodes its escapes.
        return JSON.parse(this.s.slice(start, this.i));
      } else if (c < 0x20) this.fail("control character in string");
    }
    return this.fail("unterminated string");
  }

  array(depth: number): JsonValue[] {
    const items: JsonValue[] = [];
    this.i++;
    this.ws();
    if (this.s[this.i] === "]") {
      this.i++;
      return items;
    }
    for (;;) {
      items.push(this.value(depth + 1));
      this.ws();
      const c = this.s[this.i++];
      if (c === "]") return items;
      if (c !== ",") this.fail("expected , or ]");
    }
  }

  object(depth: number): Map<string, JsonValue> {
    const entries = new Map<string, JsonValue>();
    this.i++;
    this.ws();
    if (this.s[this.i] === "}") {
      this.i++;
      return entries;
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.fail("expected a key");
      const key = this.string();
      this.ws();
      if (this.s[this.i++] !== ":") this.fail("expected :");
      entries.set(key, this.value(depth + 1));
      this.ws();
      const c = this.s[this.i++];
      if (c === "}") return entries;
      if (c !== ",") this.fail("expected , or }");
    }
  }
}

/**
 * Parses `text` as one JSON document (RFC 8259).
 *
 * @throws SyntaxError when `text` is not JSON
 * @example
 * ```ts
 * const v = parseOrderedJson('{"b": 1.0, "2": [true]}') as Map<string, unknown>;
 * [...v.keys()]; // ["b", "2"]
 * ```
 */
export function parseOrderedJson(text: string): JsonValue {
  const p = new Parser(text);
  const v = p.value(0);
  p.ws();
  if (p.i !== text.length) p.fail("unexpected text after the value");
  return v;
}

/** `parseOrderedJson`, or undefined when `text` is not JSON. */
export function tryParseOrderedJson(text: string): JsonValue | undefined {
  try {
    return parseOrderedJson(text);
  } catch {
    return undefined;
  }
}
