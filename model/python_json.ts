/**
 * JSON the way Python's `json.dumps` writes it (what Qwen3 saw in training and what
 * `transformers`' `tojson` emits): `", "` and `": "` separators, `ensure_ascii` on or off, and
 * numbers that keep their own spelling (`1.0` stays `1.0`).
 *
 * @example
 * ```ts
 * import { pythonJson } from "./python_json.ts";
 *
 * pythonJson({ command: "ls", n: [1, 2] }); // '{"command": "ls", "n": [1, 2]}'
 * pythonJson({ s: "é" }, true); // '{"s": "\u00e9"}'
 * ```
 *
 * @module
 */

/** A JSON number written with its own spelling (Python would write `1.0`, not `1`). */
export class Num {
  constructor(readonly text: string) {}
}
export type ArgValue = Num | string | boolean | null | ArgValue[] | { [key: string]: ArgValue };

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
