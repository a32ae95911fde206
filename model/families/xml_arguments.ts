/**
 * Raw-text argument values typed by the tool's schema, as the XML (Qwen3.5/3.6, Qwen3-Coder) and
 * GLM call formats need: a parameter declared as a string is a JSON string of the text; otherwise
 * the text is used as JSON when it is JSON (its own spelling kept), or as Python's
 * `True`/`False`/`None` (what Qwen3.5's template writes), else as a string. A value of an unknown
 * tool or parameter (or one whose schema names no type) is a string for the XML calls (as vLLM's
 * `qwen3_coder` parser reads it) and JSON when it is JSON for GLM (as vLLM's `glm45` parser and
 * `renderers` read it: only a declared string stays text).
 *
 * @module
 */
import type { ToolSpec } from "../../canonical/mod.ts";
import { tryParseOrderedJson } from "./ordered_json.ts";

/** Declared JSON types of a tool's parameter, or null when the schema does not say. */
function declaredTypes(tool: ToolSpec | undefined, key: string): Set<string> | null {
  const props = (tool?.parameters as { properties?: Record<string, unknown> } | undefined)
    ?.properties;
  const schema = props && Object.hasOwn(props, key) ? props[key] : undefined;
  if (typeof schema !== "object" || schema === null) return null;
  const types = new Set<string>();
  const collect = (s: unknown) => {
    if (typeof s !== "object" || s === null) return;
    const { type, enum: values, anyOf, oneOf } = s as Record<string, unknown>;
    if (typeof type === "string") types.add(type);
    if (Array.isArray(type)) type.forEach((x) => typeof x === "string" && types.add(x));
    if (Array.isArray(values) && type === undefined) {
      values.forEach((v) => types.add(v === null ? "null" : typeof v));
    }
    for (const branch of [anyOf, oneOf]) if (Array.isArray(branch)) branch.forEach(collect);
  };
  collect(schema);
  return types.size > 0 ? types : null;
}

const PYTHON_LITERALS: Record<string, string> = { True: "true", False: "false", None: "null" };

/**
 * How a value the schema does not type is read: `string` (the XML calls), or `json` when it
 * parses as JSON, else a string (GLM).
 */
export type UndeclaredValues = "string" | "json";

/** One parameter value as JSON text. */
function valueJson(value: string, types: Set<string> | null, undeclared: UndeclaredValues): string {
  if (types === null && undeclared === "json") {
    return tryParseOrderedJson(value) !== undefined ? value : JSON.stringify(value);
  }
  const onlyString = types === null || [...types].every((t) => t === "string");
  if (!onlyString) {
    if (tryParseOrderedJson(value) !== undefined) return value;
    if (Object.hasOwn(PYTHON_LITERALS, value)) return PYTHON_LITERALS[value];
  }
  return JSON.stringify(value);
}

/**
 * The arguments JSON of a call: `{"key": value, …}` in the order written (a repeated key keeps
 * its first place and its last value, as a Python dict).
 *
 * @example
 * ```ts
 * import { xmlArgumentsJson } from "./xml_arguments.ts";
 *
 * const limit = { type: "integer" };
 * const read = { name: "read", kind: "function" as const, parameters: { properties: { limit } } };
 * xmlArgumentsJson("read", [["path", "a.py"], ["limit", "10"]], [read]);
 * // '{"path": "a.py", "limit": 10}'
 * ```
 */
export function xmlArgumentsJson(
  name: string,
  params: readonly [string, string][],
  tools: readonly ToolSpec[],
  undeclared: UndeclaredValues = "string",
): string {
  const tool = tools.find((t) => t.name === name);
  const members = new Map<string, string>();
  for (const [key, value] of params) {
    members.set(key, valueJson(value, declaredTypes(tool, key), undeclared));
  }
  return `{${[...members].map(([k, v]) => `${JSON.stringify(k)}: ${v}`).join(", ")}}`;
}
