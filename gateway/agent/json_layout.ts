/**
 * Where things are in a JSON text, without parsing it into values: the offset of a top-level
 * key's value, and where each element of an array ends. The known-prefix reader
 * (`known_prefix.ts`) needs byte offsets of a request's history elements, which `JSON.parse`
 * does not give. Strings are skipped with the native `indexOf` (most of a history is string
 * content), so a scan costs little per byte; anything malformed answers `null` and the caller
 * parses the whole text, which reports the error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { arrayElements, topLevelValue } from "./json_layout.ts";
 *
 * const bytes = new TextEncoder().encode('{"model":"m","messages":[{"a":"]"}, 2],"n":1}');
 * const at = topLevelValue(bytes, "messages")!; // the offset of its `[`
 * assert.deepEqual(arrayElements(bytes, at + 1, false), { ends: [34, 37], close: 37 });
 * ```
 *
 * @module
 */

const QUOTE = 0x22, BACKSLASH = 0x5c, COMMA = 0x2c, COLON = 0x3a;
const OPEN_OBJECT = 0x7b, CLOSE_OBJECT = 0x7d, OPEN_ARRAY = 0x5b, CLOSE_ARRAY = 0x5d;

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

function skipSpace(bytes: Uint8Array, i: number): number {
  while (i < bytes.length && isSpace(bytes[i])) i++;
  return i;
}

/** The offset after the string that opens at `i` (a quote), or -1. */
function skipString(bytes: Uint8Array, i: number): number {
  for (let at = i + 1;;) {
    const quote = bytes.indexOf(QUOTE, at);
    if (quote < 0) return -1;
    let slashes = 0;
    while (bytes[quote - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return quote + 1;
    at = quote + 1;
  }
}

/** The offset after the value that starts at `i`, or -1. */
function skipValue(bytes: Uint8Array, i: number): number {
  const first = bytes[i];
  if (first === QUOTE) return skipString(bytes, i);
  if (first !== OPEN_OBJECT && first !== OPEN_ARRAY) {
    // A number, true, false or null: up to the next delimiter.
    let at = i;
    while (at < bytes.length) {
      const b = bytes[at];
      if (b === COMMA || b === CLOSE_ARRAY || b === CLOSE_OBJECT || isSpace(b)) break;
      at++;
    }
    return at > i ? at : -1;
  }
  let depth = 0;
  for (let at = i; at < bytes.length;) {
    const b = bytes[at];
    if (b === QUOTE) {
      at = skipString(bytes, at);
      if (at < 0) return -1;
      continue;
    }
    if (b === OPEN_OBJECT || b === OPEN_ARRAY) depth++;
    else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
      if (--depth === 0) return at + 1;
    }
    at++;
  }
  return -1;
}

/**
 * The offset of the value of `key` in the object that is the whole text (the last one, as
 * `JSON.parse` keeps the last of repeated keys), or null when it has none or is not an object.
 */
export function topLevelValue(bytes: Uint8Array, key: string): number | null {
  let i = skipSpace(bytes, 0);
  if (bytes[i] !== OPEN_OBJECT) return null;
  i = skipSpace(bytes, i + 1);
  if (bytes[i] === CLOSE_OBJECT) return null;
  const decoder = new TextDecoder();
  let found: number | null = null;
  for (;;) {
    if (bytes[i] !== QUOTE) return null;
    const end = skipString(bytes, i);
    if (end < 0) return null;
    let name: unknown;
    try {
      name = JSON.parse(decoder.decode(bytes.subarray(i, end)));
    } catch {
      return null;
    }
    i = skipSpace(bytes, end);
    if (bytes[i] !== COLON) return null;
    const value = skipSpace(bytes, i + 1);
    const after = skipValue(bytes, value);
    if (after < 0) return null;
    if (name === key) found = value;
    i = skipSpace(bytes, after);
    if (bytes[i] === CLOSE_OBJECT) return found;
    if (bytes[i] !== COMMA) return null;
    i = skipSpace(bytes, i + 1);
  }
}

/**
 * The elements of an array from offset `i` on: `i` is just after its `[` (`afterElement`
 * false) or just after one of its elements (true). Answers where each element from there ends
 * (the offset after its last byte) and where the closing `]` is, or null when the text is not a
 * well-formed array there.
 */
export function arrayElements(
  bytes: Uint8Array,
  i: number,
  afterElement: boolean,
): { ends: number[]; close: number } | null {
  const ends: number[] = [];
  let expectComma = afterElement;
  for (;;) {
    i = skipSpace(bytes, i);
    if (i >= bytes.length) return null;
    if (bytes[i] === CLOSE_ARRAY) return { ends, close: i };
    if (expectComma) {
      if (bytes[i] !== COMMA) return null;
      i = skipSpace(bytes, i + 1);
    }
    const end = skipValue(bytes, i);
    if (end < 0) return null;
    ends.push(end);
    i = end;
    expectComma = true;
  }
}
