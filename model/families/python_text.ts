/**
 * How Python writes values, for templates whose text is whatever Python's `str()`,
 * `json.dumps()` and `str.strip()` make of them (Jinja's `string`, `tojson` and `trim`).
 *
 * - `pythonFloatRepr`: `repr(float)`, the shortest digits that round-trip, fixed notation for
 *   decimal exponents in [-4, 16), otherwise `1e-05` / `1e+16` (JavaScript writes `0.00001`,
 *   `10000000000000000`).
 * - `pythonJsonDumps`: `json.dumps(value, ensure_ascii=False)`: `", "` and `": "` separators.
 * - `pythonScalarStr`: `str()` of a JSON scalar (`True`, `None`, `1.0`).
 * - `pythonStrip`: `str.strip()`, whose whitespace differs from JavaScript's `trim` (Python
 *   strips U+001C–U+001F and U+0085, JavaScript strips U+FEFF).
 *
 * Values are `JsonValue`s (numbers with their source text, see `ordered_json.ts`) or plain
 * JavaScript values, whose integral numbers are written as ints.
 *
 * @module
 */
import { JsonNumber, type JsonValue } from "./ordered_json.ts";

/**
 * `repr()` of a Python float.
 *
 * @example
 * ```ts
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

/** `str()` of a JSON number as Python's `json.loads` would make it (int or float). */
function numberText(n: JsonNumber | number, json: boolean): string {
  if (typeof n === "number") {
    if (Number.isInteger(n)) return BigInt(n).toString();
    return pythonFloatRepr(n);
  }
  if (n.isInteger) return n.text === "-0" ? "0" : n.text;
  const x = Number(n.text);
  if (json && !Number.isFinite(x)) return x > 0 ? "Infinity" : "-Infinity";
  return pythonFloatRepr(x);
}

/**
 * `json.dumps(value, ensure_ascii=False)`.
 *
 * @example
 * ```ts
 * pythonJsonDumps({ a: [1, 2.5, true, null], b: "é" }); // '{"a": [1, 2.5, true, null], "b": "é"}'
 * ```
 */
export function pythonJsonDumps(value: JsonValue | unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number" || value instanceof JsonNumber) return numberText(value, true);
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(", ")}]`;
  const entries = value instanceof Map
    ? [...value.entries()]
    : Object.entries(value as Record<string, unknown>);
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}: ${pythonJsonDumps(v)}`).join(", ")}}`;
}

/**
 * `str()` of a JSON scalar: strings as they are, `True`/`False`/`None`, ints and float reprs.
 * Containers are written as `json.dumps` (what templates do with mappings and sequences).
 */
export function pythonScalarStr(value: JsonValue): string {
  if (typeof value === "string") return value;
  if (value === null) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  if (value instanceof JsonNumber) return numberText(value, false);
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
 * pythonStrip("\u0085 hi \ufeff"); // "hi \ufeff"
 * ```
 */
export function pythonStrip(s: string): string {
  let a = 0, b = s.length;
  while (a < b && isPythonSpace(s.charCodeAt(a))) a++;
  while (b > a && isPythonSpace(s.charCodeAt(b - 1))) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}
