/**
 * The raw source text of one top-level member of a JSON object.
 *
 * A parsed-and-reserialized tool-call argument loses the model's own spacing; the raw text keeps
 * it, so a later full render of the recorded assistant message reproduces what was sampled.
 *
 * @module
 */

function skipWhitespace(s: string, i: number): number {
  while (i < s.length && " \t\n\r".includes(s[i])) i++;
  return i;
}

/** Index just past the string literal starting at `i` (which must be a `"`). */
function endOfString(s: string, i: number): number {
  for (i++; i < s.length; i++) {
    if (s[i] === "\\") i++;
    else if (s[i] === '"') return i + 1;
  }
  throw new SyntaxError("unterminated string");
}

/** Index just past the JSON value starting at `i`. */
function endOfValue(s: string, i: number): number {
  if (s[i] === '"') return endOfString(s, i);
  if (s[i] === "{" || s[i] === "[") {
    let depth = 0;
    for (; i < s.length; i++) {
      const c = s[i];
      if (c === '"') {
        i = endOfString(s, i) - 1;
      } else if (c === "{" || c === "[") {
        depth++;
      } else if (c === "}" || c === "]") {
        if (--depth === 0) return i + 1;
      }
    }
    throw new SyntaxError("unterminated container");
  }
  let j = i;
  while (j < s.length && !",}] \t\n\r".includes(s[j])) j++;
  return j;
}

/**
 * Returns the raw text of `key` in the top-level object `json`, or undefined. `json` must already
 * be known to be valid JSON (callers `JSON.parse` it first).
 *
 * @example
 * ```ts
 * rawMember('{"name": "f", "arguments": {"a":  1}}', "arguments"); // '{"a":  1}'
 * ```
 */
export function rawMember(json: string, key: string): string | undefined {
  let i = skipWhitespace(json, 0);
  if (json[i] !== "{") return undefined;
  i = skipWhitespace(json, i + 1);
  let found: string | undefined;
  while (i < json.length && json[i] !== "}") {
    const keyEnd = endOfString(json, i);
    const name = JSON.parse(json.slice(i, keyEnd)) as string;
    i = skipWhitespace(json, keyEnd);
    i = skipWhitespace(json, i + 1); // past ':'
    const valueEnd = endOfValue(json, i);
    // Last duplicate wins, as in JSON.parse.
    if (name === key) found = json.slice(i, valueEnd);
    i = skipWhitespace(json, valueEnd);
    if (json[i] === ",") i = skipWhitespace(json, i + 1);
  }
  return found;
}
