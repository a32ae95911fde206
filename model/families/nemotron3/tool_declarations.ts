/**
 * Nemotron 3's tool list: one XML `<function>` block per tool, as its chat template writes it
 * (the Qwen3-Coder style):
 *
 * ```
 * <function>
 * <name>NAME</name>
 * <description>DESCRIPTION (trimmed; left out when empty)</description>
 * <parameters>
 * <parameter>
 * <name>KEY</name>
 * <type>TYPE</type>
 * <description>…</description>
 * <enum>["a", "b"]</enum>
 * <KEY2>VALUE</KEY2>   (any other key of the parameter's schema)
 * </parameter>
 * …
 * <KEY3>VALUE</KEY3>   (any other key of the parameters object but type/properties/required)
 * <required>["KEY"]</required>
 * </parameters>
 * </function>
 * ```
 *
 * Mappings and sequences are written with Jinja's `tojson` as `transformers` defines it (Python
 * `json.dumps`, `ensure_ascii=False`), anything else with `| string` (Python `str()`: `True`,
 * `None`, and a list `type` such as `['string', 'null']`).
 *
 * @module
 */
import { toTemplateTools } from "../../template_input.ts";
import type { ToolSpec } from "../../../canonical/mod.ts";
import { pythonJson, pythonScalarStr, pythonStrip } from "../../python_json.ts";

/** Python's `repr()` of a string (quotes as Python picks them). */
function pythonStrRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  const body = s.replace(
    /[\\\n\r\t]/g,
    (c) => ({ "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" })[c]!,
  )
    .replaceAll(quote, "\\" + quote);
  return quote + body + quote;
}

/** Python's `str()` of a JSON value (containers as Python prints them). */
export function pythonStr(v: unknown): string {
  const repr = (x: unknown): string => typeof x === "string" ? pythonStrRepr(x) : pythonStr(x);
  if (Array.isArray(v)) return `[${v.map(repr).join(", ")}]`;
  if (v !== null && typeof v === "object") {
    return `{${Object.entries(v).map(([k, x]) => `${pythonStrRepr(k)}: ${repr(x)}`).join(", ")}}`;
  }
  return pythonScalarStr(v);
}

/**
 * A value in an XML tool declaration: `tojson` for mappings and sequences, `str()` for the rest
 * (Nemotron 3's and Prime-Qwen3's templates).
 */
export function declarationValue(v: unknown, ensureAscii = false): string {
  return v !== null && typeof v === "object" ? pythonJson(v, ensureAscii) : pythonStr(v);
}

function extraKeys(
  obj: Record<string, unknown>,
  handled: readonly string[],
  ensureAscii: boolean,
): string[] {
  return Object.entries(obj).filter(([k]) => !handled.includes(k))
    .map(([k, v]) => `<${k}>${declarationValue(v, ensureAscii)}</${k}>`);
}

/**
 * The `<function>` blocks of `tools`, one per tool, joined by newlines. `ensureAscii`: JSON as
 * `renderers` writes it (`json.dumps` with its default `ensure_ascii=True`), for the test
 * reference only.
 */
export function nemotronToolDeclarations(tools: readonly ToolSpec[], ensureAscii = false): string {
  return toTemplateTools(tools).map(({ function: f }) => {
    const lines = ["<function>", `<name>${f.name}</name>`];
    const description = pythonStrip(f.description ?? "");
    if (description) lines.push(`<description>${description}</description>`);
    lines.push("<parameters>");
    const params = f.parameters;
    if (params !== null && typeof params === "object" && !Array.isArray(params)) {
      const p = params as Record<string, unknown>;
      const properties = p.properties;
      if (properties !== null && typeof properties === "object") {
        for (const [name, raw] of Object.entries(properties as Record<string, unknown>)) {
          const field = (raw ?? {}) as Record<string, unknown>;
          lines.push("<parameter>", `<name>${name}</name>`);
          if ("type" in field) lines.push(`<type>${pythonStr(field.type)}</type>`);
          if ("description" in field) {
            lines.push(`<description>${pythonStrip(String(field.description))}</description>`);
          }
          if ("enum" in field) lines.push(`<enum>${pythonJson(field.enum, ensureAscii)}</enum>`);
          lines.push(...extraKeys(field, ["name", "type", "description", "enum"], ensureAscii));
          lines.push("</parameter>");
        }
      }
      lines.push(...extraKeys(p, ["type", "properties", "required"], ensureAscii));
      if ("required" in p) {
        lines.push(`<required>${pythonJson(p.required, ensureAscii)}</required>`);
      }
    }
    lines.push("</parameters>", "</function>");
    return lines.join("\n");
  }).join("\n");
}
