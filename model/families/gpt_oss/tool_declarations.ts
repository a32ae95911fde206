/**
 * Function tools as harmony declares them in the developer message: a `functions` namespace of
 * TypeScript-like types, one `type NAME = (_: {…}) => any;` per tool, its description as `//`
 * comment lines above it. The argument type is written from the tool's JSON schema the way
 * OpenAI's harmony renderer writes it (the model was trained on exactly this text):
 *
 * - objects: `{`, then per property its title (`// T` + `//`), description and string examples as
 *   comment lines, `key?: TYPE,` (`?` unless required) and ` // default: D`, then `}`; nested
 *   levels indent their properties by four more spaces (the closing brace too);
 * - `string` (with `enum`: `"a" | "b"`, values unescaped), `number`/`integer` → `number`,
 *   `boolean`, `array` → `ITEM[]` (no `items`: `Array<any>`), `type: [..]` → `a | b`,
 *   `nullable: true` → ` | null`, anything else → `any`;
 * - `oneOf`: one ` | VARIANT` line per variant, with its description and default as comments;
 * - a string default is written in quotes (raw) unless the property is an enum, other defaults as
 *   compact JSON.
 *
 * A tool without parameters, or whose object schema has no properties, takes no argument:
 * `type NAME = () => any;` (as the format asks for functions without arguments).
 *
 * @module
 */
import type { ToolSpec } from "../../../canonical/mod.ts";

type Json = unknown;
type JsonObject = { [key: string]: Json };

function isObject(v: Json): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function field(v: Json, key: string): Json {
  return isObject(v) ? v[key] : undefined;
}

function text(v: Json, key: string): string | undefined {
  const f = field(v, key);
  return typeof f === "string" ? f : undefined;
}

function isEnum(schema: Json): boolean {
  const e = field(schema, "enum");
  return Array.isArray(e) && e.length > 0;
}

/** A default value as a trailing comment writes it. */
function defaultText(value: Json, schema: Json, quoteEnum: boolean): string {
  if (typeof value === "string") {
    if (!isEnum(schema)) return `"${value}"`;
    return quoteEnum ? JSON.stringify(value) : value;
  }
  return JSON.stringify(value);
}

function withNull(type: string, schema: Json): string {
  return field(schema, "nullable") === true && !type.includes("null") ? `${type} | null` : type;
}

/** The variants of a `oneOf` schema (top level of a type). */
function oneOfType(variants: Json[], indent: string): string {
  let out = "";
  for (const variant of variants) {
    out += `\n${indent} | ` + withNull(schemaType(variant, `${indent}   `), variant);
    const comments: string[] = [];
    const description = text(variant, "description");
    if (description !== undefined) comments.push(description);
    const value = field(variant, "default");
    if (value !== undefined) comments.push(`default: ${defaultText(value, variant, true)}`);
    if (comments.length > 0) out += ` // ${comments.join(" ")}`;
  }
  return out;
}

/** A property whose schema is a `oneOf`: comments above it, one line per variant. */
function oneOfProperty(
  key: string,
  optional: string,
  schema: JsonObject,
  variants: Json[],
  indent: string,
): string {
  let out = "";
  const description = text(schema, "description");
  const skipDescription = description !== undefined &&
    text(variants[0], "description") === description;
  const above = description !== undefined && !skipDescription;
  if (above) out += `${indent}// ${description}\n`;
  const value = schema.default;
  if (value !== undefined) out += `${indent}// default: ${defaultText(value, schema, false)}\n`;
  out += `${indent}${key}${optional}:\n`;
  variants.forEach((variant, i) => {
    out += `${indent} | ` + withNull(schemaType(variant, `${indent}   `), variant);
    const comments: string[] = [];
    const own = text(variant, "description");
    if (!(i === 0 && above) && own !== undefined && own !== description) comments.push(own);
    const v = field(variant, "default");
    if (v !== undefined) comments.push(`default: ${defaultText(v, variant, false)}`);
    if (comments.length > 0) out += ` // ${comments.join(" ")}`;
    out += "\n";
  });
  return out + `${indent},\n`;
}

function objectType(schema: JsonObject, indent: string): string {
  let out = "";
  const description = text(schema, "description");
  if (description !== undefined) out += `${indent}// ${description}\n`;
  out += "{\n";
  const properties = schema.properties;
  if (isObject(properties)) {
    const required = new Set(
      Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : [],
    );
    for (const [key, value] of Object.entries(properties)) {
      const title = text(value, "title");
      if (title !== undefined) out += `${indent}// ${title}\n${indent}//\n`;
      const oneOf = field(value, "oneOf");
      const own = text(value, "description");
      if (oneOf === undefined && own !== undefined) out += `${indent}// ${own}\n`;
      const examples = field(value, "examples");
      if (Array.isArray(examples) && examples.length > 0) {
        out += `${indent}// Examples:\n`;
        for (const ex of examples) if (typeof ex === "string") out += `${indent}// - "${ex}"\n`;
      }
      const optional = required.has(key) ? "" : "?";
      if (Array.isArray(oneOf) && isObject(value)) {
        out += oneOfProperty(key, optional, value, oneOf, indent);
        continue;
      }
      out += `${indent}${key}${optional}: ` + withNull(schemaType(value, `${indent}    `), value) +
        ",";
      const v = field(value, "default");
      if (oneOf === undefined && v !== undefined) {
        out += ` // default: ${defaultText(v, value, false)}`;
      }
      out += "\n";
    }
  }
  return out + `${indent}}`;
}

/** The TypeScript-like type harmony writes for a JSON schema. */
export function schemaType(schema: Json, indent = ""): string {
  const oneOf = field(schema, "oneOf");
  if (Array.isArray(oneOf)) return oneOfType(oneOf, indent);
  const type = field(schema, "type");
  if (Array.isArray(type)) {
    const names = type.filter((t) => typeof t === "string").map((t) =>
      t === "integer" ? "number" : t
    );
    if (names.length > 0) return names.join(" | ");
  }
  if (typeof type !== "string") return "any";
  switch (type) {
    case "object":
      return objectType(schema as JsonObject, indent);
    case "string": {
      const values = field(schema, "enum");
      const names = Array.isArray(values)
        ? values.filter((v) => typeof v === "string").map((v) => `"${v}"`)
        : [];
      return names.length > 0 ? names.join(" | ") : "string";
    }
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "array": {
      const items = field(schema, "items");
      return items === undefined ? "Array<any>" : `${schemaType(items, indent)}[]`;
    }
    default:
      return "any";
  }
}

/** Whether a tool takes an argument object (`(_: {…}) => any`) or none (`() => any`). */
function takesArguments(parameters: Json): boolean {
  if (parameters === undefined || parameters === null) return false;
  if (field(parameters, "type") !== "object") return true;
  const properties = field(parameters, "properties");
  return isObject(properties) && Object.keys(properties).length > 0;
}

/** Lines of a text as Rust's `str::lines` gives them (no last empty line, `\r\n` ends too). */
function lines(s: string): string[] {
  if (s === "") return [];
  const out = s.split("\n");
  if (out.at(-1) === "") out.pop();
  return out.map((l) => l.endsWith("\r") ? l.slice(0, -1) : l);
}

/**
 * The `# Tools` section declaring `tools` in the `functions` namespace.
 *
 * @example
 * ```ts
 * import { toolsSection } from "./tool_declarations.ts";
 *
 * toolsSection([{ name: "ls", kind: "function", description: "List files." }]);
 * // "# Tools\n\n## functions\n\nnamespace functions {\n\n// List files.\n" +
 * // "type ls = () => any;\n\n} // namespace functions"
 * ```
 */
export function toolsSection(tools: readonly ToolSpec[]): string {
  const parts = ["## functions\n", "namespace functions {\n"];
  for (const tool of tools) {
    for (const line of lines(tool.description ?? "")) parts.push(`// ${line}`);
    parts.push(
      takesArguments(tool.parameters)
        ? `type ${tool.name} = (_: ${schemaType(tool.parameters)}) => any;\n`
        : `type ${tool.name} = () => any;\n`,
    );
  }
  parts.push("} // namespace functions");
  return "# Tools\n\n" + parts.join("\n");
}
