/**
 * JSON and text the way Python writes them, for templates whose text is whatever Python's
 * `json.dumps()`, `str()` and `str.strip()` make of a value (Jinja's `tojson`, `string`, `trim`):
 *
 * - `pythonJson`: `json.dumps` separators (`", "`, `": "`), `ensure_ascii` on or off, numbers
 *   as spelled (`Num`s keep their text: `1.0` stays `1.0`). For writing what a policy wrote.
 * - `pythonJsonDumps`: `json.dumps(json.loads(text))`, i.e. numbers as Python re-spells them
 *   (`2.5e-3` → `0.0025`, `1E2` → `100.0`), with object keys in the order written (`Map`s from
 *   `parseOrderedJson`).
 * - `pythonScalarStr`: `str()` of a JSON scalar (`True`, `None`, `1.0`).
 * - `pythonFloatRepr`: `repr(float)`: the shortest digits that round-trip, fixed notation for
 *   decimal exponents in [-4, 16), otherwise `1e-05` / `1e+16` (JavaScript writes `0.00001`).
 * - `pythonStrip`: `str.strip()`, whose whitespace differs from JavaScript's `trim` (Python
 *   strips U+001C–U+001F and U+0085; JavaScript strips U+FEFF).
 *
 * @example
 * ```ts
 * import { Num, pythonJson, pythonJsonDumps } from "./python_json.ts";
 *
 * pythonJson({ command: "ls", n: [1, new Num("2.0")] }); // '{"command": "ls", "n": [1, 2.0]}'
 * pythonJson({ s: "é" }, true); // '{"s": "\u00e9"}'
 * pythonJsonDumps({ t: new Num("2.5e-3"), ok: true }); // '{"t": 0.0025, "ok": true}'
 * ```
 *
 * @module
 */

/** A JSON number written with its own spelling (Python would write `1.0`, not `1`). */
export class Num {
  constructor(readonly text: string) {}
}
export type ArgValue = Num | string | boolean | null | ArgValue[] | { [key: string]: ArgValue };

/** Python's `json.loads` makes an int of a number without fraction or exponent. */
export function isIntegerText(text: string): boolean {
  return !/[.eE]/.test(text);
}

function hex4(code: number): string {
  return "\\u" + code.toString(16).padStart(4, "0");
}

/** A string literal as Python's `json.dumps` writes it. */
export function pythonString(s: string, ensureAscii: boolean): string {
  const json = JSON.stringify(s);
  return ensureAscii ? json.replace(/[\u0080-\uffff]/g, (c) => hex4(c.charCodeAt(0))) : json;
}

/** `json.dumps`' `separators`, `sort_keys` and `indent`. */
export interface JsonLayout {
  separators?: readonly [item: string, key: string];
  sortKeys?: boolean;
  /** Spaces per level; items then go one per line and the item separator defaults to `,`. */
  indent?: number;
}

/** Python sorts keys by code point (JavaScript's default sort compares UTF-16 units). */
function byCodePoint(a: string, b: string): number {
  const x = [...a], y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0)! - y[i].codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** JSON with Python's separators; `number` writes numbers. Objects may be `Map`s. */
function writeJson(
  v: unknown,
  ensureAscii: boolean,
  number: (n: Num | number) => string,
  layout: JsonLayout = {},
  depth = 0,
): string {
  if (v instanceof Num || typeof v === "number") return number(v);
  if (typeof v === "string") return pythonString(v, ensureAscii);
  if (v === null || v === undefined) return "null";
  if (typeof v !== "object") return String(v);
  const indented = layout.indent !== undefined;
  const [item, key] = layout.separators ?? [indented ? "," : ", ", ": "];
  const w = (x: unknown) => writeJson(x, ensureAscii, number, layout, depth + 1);
  // Python writes empty containers bare, and with `indent` one item per line.
  const wrap = (open: string, items: string[], close: string) => {
    if (!indented || items.length === 0) return open + items.join(item) + close;
    const inner = "\n" + " ".repeat(layout.indent! * (depth + 1));
    const outer = "\n" + " ".repeat(layout.indent! * depth);
    return open + inner + items.join(item + inner) + outer + close;
  };
  if (Array.isArray(v)) return wrap("[", v.map(w), "]");
  const entries = v instanceof Map ? [...v] : Object.entries(v);
  if (layout.sortKeys) entries.sort(([a], [b]) => byCodePoint(a, b));
  return wrap("{", entries.map(([k, x]) => `${pythonString(k, ensureAscii)}${key}${w(x)}`), "}");
}

/**
 * A value as Python's `json.dumps` writes it: `", "` and `": "` separators. Numbers are written
 * as JS does, except `Num`s, which keep their own spelling.
 */
export function pythonJson(v: unknown, ensureAscii = false): string {
  return writeJson(v, ensureAscii, (n) => n instanceof Num ? n.text : String(n));
}

/**
 * `repr()` of a Python float.
 *
 * @example
 * ```ts
 * import { pythonFloatRepr } from "./python_json.ts";
 *
 * pythonFloatRepr(0.00001); // "1e-05"
 * pythonFloatRepr(2); // "2.0"
 * pythonFloatRepr(1e16); // "1e+16"
 * ```
 */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  // toExponential() without digits gives the shortest round-trip digits, as Python's repr.
  const [mantissa, exp] = Math.abs(x).toExponential().split("e");
  const digits = mantissa.replace(".", "");
  const point = Number(exp) + 1; // value = 0.DIGITS × 10^point
  if (point > 16 || point <= -4) {
    const rest = digits.slice(1);
    const e = point - 1;
    return `${sign}${digits[0]}${rest ? "." + rest : ""}e${e < 0 ? "-" : "+"}${
      String(Math.abs(e)).padStart(2, "0")
    }`;
  }
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${"0".repeat(point - digits.length)}.0`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** A number as Python writes the value `json.loads` makes of it (`json`: as `json.dumps`). */
function pythonNumber(n: Num | number, json: boolean): string {
  if (typeof n === "number") {
    return Number.isInteger(n) ? BigInt(n).toString() : pythonFloatRepr(n);
  }
  if (isIntegerText(n.text)) return n.text === "-0" ? "0" : n.text;
  const x = Number(n.text);
  if (json && !Number.isFinite(x)) return x > 0 ? "Infinity" : "-Infinity";
  return pythonFloatRepr(x);
}

/**
 * `json.dumps(value, ensure_ascii=False)` of the value Python's `json.loads` makes of it: `Num`s
 * re-spelled as Python does; JavaScript numbers are ints when integral. `layout`: `separators`
 * and `sort_keys` (keys sorted by code point, as Python sorts strings).
 */
export function pythonJsonDumps(value: unknown, layout?: JsonLayout): string {
  return writeJson(value, false, (n) => pythonNumber(n, true), layout);
}

/**
 * `str()` of a JSON scalar: strings as they are, `True`/`False`/`None`, ints and float reprs.
 * Containers are written as `json.dumps` (what templates do with mappings and sequences).
 */
export function pythonScalarStr(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  if (value instanceof Num || typeof value === "number") return pythonNumber(value, false);
  return pythonJsonDumps(value);
}

/** Characters Python's `str.isspace()` accepts (what `str.strip()` removes). */
export function isPythonSpace(code: number): boolean {
  return (code >= 0x09 && code <= 0x0d) || (code >= 0x1c && code <= 0x20) || code === 0x85 ||
    code === 0xa0 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000;
}

/**
 * Python's `str.strip()` (Jinja's `trim`).
 *
 * @example
 * ```ts
 * import { pythonStrip } from "./python_json.ts";
 *
 * pythonStrip("\u0085 hi \ufeff"); // "hi \ufeff"
 * ```
 */
export function pythonStrip(s: string): string {
  let a = 0, b = s.length;
  while (a < b && isPythonSpace(s.charCodeAt(a))) a++;
  while (b > a && isPythonSpace(s.charCodeAt(b - 1))) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}

/** Python's `str.rstrip()`. */
export function pythonRstrip(s: string): string {
  let b = s.length;
  while (b > 0 && isPythonSpace(s.charCodeAt(b - 1))) b--;
  return b === s.length ? s : s.slice(0, b);
}
