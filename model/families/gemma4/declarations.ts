/**
 * Gemma 4's own value syntax (tool declarations, call arguments, tool results), written as its
 * chat template writes it: objects with unquoted keys sorted case-insensitively, strings between
 * `<|"|>` markers, `true`/`false`/`null`, numbers as Python prints them; and a tool's
 * `declaration:NAME{description:…,parameters:{properties:{…},required:[…],type:…}}`, the
 * schema's types upper-cased and only the keys the template reads.
 *
 * @module
 */
import { toTemplateTools } from "../../template_input.ts";
import type { ToolSpec } from "../../../canonical/mod.ts";
import { Num, pythonScalarStr } from "../../python_json.ts";
import { pythonStr } from "../nemotron3/mod.ts";

/** The string delimiter (an added token). */
export const QUOTE = '<|"|>';

/** An object: a `Map` (parsed arguments) or a plain object (a tool's schema). */
function isObject(v: unknown): boolean {
  return v instanceof Map ||
    (v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Num));
}

function entries(v: unknown): [string, unknown][] {
  if (v instanceof Map) return [...v];
  return isObject(v) ? Object.entries(v as Record<string, unknown>) : [];
}

/** Jinja's `dictsort`: by key, case-insensitively (a stable sort). */
function dictsort(v: unknown): [string, unknown][] {
  return entries(v).sort(([a], [b]) => {
    const x = a.toLowerCase(), y = b.toLowerCase();
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

/** Python's truthiness of a JSON value. */
function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === "" || v === 0) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (isObject(v)) return entries(v).length > 0;
  if (v instanceof Num) return Number(v.text) !== 0;
  return true;
}

/** A value in Gemma's syntax (`escapeKeys`: keys between `<|"|>`, as declarations write them). */
export function gemmaValue(v: unknown, escapeKeys = true): string {
  if (v === null || v === undefined) return "null";
  if (typeof v === "string") return QUOTE + v + QUOTE;
  if (typeof v === "boolean") return v ? "true" : "false";
  if (Array.isArray(v)) return "[" + v.map((x) => gemmaValue(x, escapeKeys)).join(",") + "]";
  if (isObject(v)) {
    return "{" + dictsort(v).map(([k, x]) =>
      (escapeKeys ? QUOTE + k + QUOTE : k) + ":" + gemmaValue(x, escapeKeys)
    ).join(",") + "}";
  }
  return pythonScalarStr(v);
}

const STANDARD_KEYS = ["description", "type", "properties", "required", "nullable"];

function quoted(list: unknown): string {
  return (Array.isArray(list) ? list : []).map((x) => QUOTE + String(x) + QUOTE).join(",");
}

function upperType(t: unknown): string {
  return (t === undefined || t === null || t === "" ? "" : pythonStr(t)).toUpperCase();
}

function get(o: unknown, key: string): unknown {
  return isObject(o) ? (o as Record<string, unknown>)[key] : undefined;
}

function parameters(properties: unknown, filterKeys = false): string {
  const out: string[] = [];
  for (const [key, raw] of dictsort(properties)) {
    if (filterKeys && STANDARD_KEYS.includes(key)) continue;
    const value = isObject(raw) ? raw : {};
    const fields: string[] = [];
    const description = get(value, "description");
    if (truthy(description)) fields.push(`description:${QUOTE}${description}${QUOTE}`);
    const type = upperType(get(value, "type"));
    if (type === "STRING" && truthy(get(value, "enum"))) {
      fields.push(`enum:${gemmaValue(get(value, "enum"))}`);
    } else if (type === "ARRAY") {
      const items = get(value, "items");
      if (isObject(items) && truthy(items)) {
        const itemFields: string[] = [];
        for (const [k, v] of dictsort(items)) {
          if (v === null || v === undefined) continue;
          if (k === "properties") {
            const nested = isObject(v) ? parameters(v) : "";
            itemFields.push(`properties:{${nested}}`);
          } else if (k === "required") itemFields.push(`required:[${quoted(v)}]`);
          else if (k === "type") {
            const upper = typeof v === "string"
              ? v.toUpperCase()
              : (v as unknown[]).map((x) => String(x).toUpperCase());
            itemFields.push(`type:${gemmaValue(upper)}`);
          } else itemFields.push(`${k}:${gemmaValue(v)}`);
        }
        fields.push(`items:{${itemFields.join(",")}}`);
      }
    }
    if (truthy(get(value, "nullable"))) fields.push("nullable:true");
    if (type === "OBJECT") {
      const nested = get(value, "properties");
      if (isObject(nested)) {
        fields.push(`properties:{${parameters(nested)}}`);
      } else fields.push(`properties:{${parameters(value, true)}}`);
      if (truthy(get(value, "required"))) {
        fields.push(`required:[${quoted(get(value, "required"))}]`);
      }
    }
    fields.push(`type:${QUOTE}${type}${QUOTE}`);
    out.push(`${key}:{${fields.join(",")}}`);
  }
  return out.join(",");
}

/** One tool's declaration (what goes between `<|tool>` and `<tool|>`). */
export function gemmaDeclarations(tools: readonly ToolSpec[]): string[] {
  return toTemplateTools(tools).map(({ function: f }) => {
    let out = `declaration:${f.name}{description:${QUOTE}${f.description ?? ""}${QUOTE}`;
    const params = f.parameters;
    if (isObject(params) && truthy(params)) {
      const fields: string[] = [];
      const properties = get(params, "properties");
      if (isObject(properties) && truthy(properties)) {
        fields.push(`properties:{${parameters(properties)}}`);
      }
      if (truthy(get(params, "required"))) {
        fields.push(`required:[${quoted(get(params, "required"))}]`);
      }
      if (truthy(get(params, "type"))) {
        fields.push(`type:${QUOTE}${pythonStr(get(params, "type")).toUpperCase()}${QUOTE}`);
      }
      out += `,parameters:{${fields.join(",")}}`;
    }
    return out + "}";
  });
}
