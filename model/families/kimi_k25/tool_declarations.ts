/**
 * Kimi K2.5/K2.6's tool declarations: each tool's JSON Schema written TypeScript-style, inside
 * `namespace functions { … }` (what the model's tokenizer code computes as `tools_ts_str` and its
 * template writes in the `tool_declare` turn):
 *
 * - a function is `// DESCRIPTION` lines, then `type NAME = (_: PARAMS) => any;`;
 * - an object is `{\n` + one member per line (required ones first, each group sorted by name;
 *   `name?:` when optional), `,\n`-separated, + `\n}` (`{}` when empty); `additionalProperties`
 *   adds `[k: string]: TYPE` (`any` for true, `never` for false);
 * - a member is preceded by its description (`// ` per line), its constraints (`// k: v, …`,
 *   sorted: `maxLength`/`minLength`/`pattern` of strings, `maximum`/`minimum` of numbers,
 *   `maxItems`/`minItems` of arrays) and `// Default: JSON`;
 * - `integer` is `number`; an array is `Array<T>` (its item's comments inside the brackets); an
 *   enum is its values joined ` | ` (strings quoted); `anyOf` and a type list join ` | `;
 * - `$defs` become `interface NAME {…}` lines before the function (`#` refers to the whole
 *   parameter list: `interface parameters`).
 *
 * A schema the upstream encoder rejects (no `type`, an unknown `$ref`) is written `any` here.
 *
 * @module
 */
import type { ToolSpec } from "../../../canonical/mod.ts";
import { pythonJsonDumps, pythonScalarStr } from "../../python_json.ts";

type Schema = Record<string, unknown>;
const INDENT = "  ";
const UNION_NAMES: Record<string, string> = {
  string: "string",
  number: "number",
  integer: "number",
  boolean: "boolean",
  null: "null",
  object: "{}",
  array: "Array<any>",
};

function comment(text: string, indent = ""): string {
  return text.split("\n").map((line) => line ? `${indent}// ${line}` : "").join("\n");
}

/** The names of `$defs` met, and whether `#` (the whole parameter list) was referred to. */
interface Registry {
  defs: Map<string, unknown>;
  selfRef: boolean;
}

/** A parsed schema: its TypeScript text at an indent, and the comments before a member of it. */
interface TsType {
  ts(indent: string): string;
  docs(indent: string): string;
}

function docsOf(schema: Schema, constraintKeys: readonly string[]): (indent: string) => string {
  return (indent) => {
    const lines: string[] = [];
    if (typeof schema.description === "string" && schema.description) {
      lines.push(comment(schema.description, indent));
    }
    const constraints = constraintKeys.filter((k) => Object.hasOwn(schema, k)).sort();
    if (constraints.length > 0) {
      lines.push(
        `${indent}// ${constraints.map((k) => `${k}: ${pythonScalarStr(schema[k])}`).join(", ")}`,
      );
    }
    return lines.map((l) => l + "\n").join("");
  };
}

function objectType(schema: Schema, registry: Registry): TsType & { members: Member[] } {
  if (schema.$defs && typeof schema.$defs === "object") {
    for (const [k, v] of Object.entries(schema.$defs as Schema)) registry.defs.set(k, v);
  }
  const extra = schema.additionalProperties;
  const extraType = typeof extra === "object" && extra !== null
    ? parseType(extra as Schema, registry)
    : undefined;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const members = Object.entries((schema.properties ?? {}) as Record<string, unknown>).map((
    [name, prop],
  ) => member(name, parseType(prop, registry), !required.has(name), prop));
  return {
    members,
    docs: docsOf(schema, []),
    ts(indent) {
      const byName = (a: Member, b: Member) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
      const sorted = [
        ...members.filter((m) => !m.optional).sort(byName),
        ...members.filter((m) => m.optional).sort(byName),
      ];
      const lines = sorted.map((m) => m.ts(indent + INDENT));
      if (extra === true) lines.push(`${indent + INDENT}[k: string]: any`);
      else if (extra === false) lines.push(`${indent + INDENT}[k: string]: never`);
      else if (extraType) {
        lines.push(`${indent + INDENT}[k: string]: ${extraType.ts(indent + INDENT)}`);
      }
      return lines.length === 0 ? "{}" : `{\n${lines.join(",\n")}\n${indent}}`;
    },
  };
}

interface Member {
  name: string;
  optional: boolean;
  ts(indent: string): string;
}

function member(name: string, type: TsType, optional: boolean, prop: unknown): Member {
  const fallback = typeof prop === "object" && prop !== null ? (prop as Schema).default : undefined;
  return {
    name,
    optional,
    ts(indent) {
      let docs = type.docs(indent);
      if (fallback !== undefined && fallback !== null) {
        docs += `${indent}// Default: ${pythonJsonDumps(fallback)}\n`;
      }
      return `${docs}${indent}${name}${optional ? "?" : ""}: ${type.ts(indent)}`;
    },
  };
}

function parseType(schema: unknown, registry: Registry): TsType {
  if (typeof schema === "boolean") return scalar(schema ? "any" : "null", {});
  if (typeof schema !== "object" || schema === null) return scalar("any", {});
  const s = schema as Schema;
  if (typeof s.$ref === "string") {
    const ref = s.$ref;
    if (ref === "#") registry.selfRef = true;
    const name = ref === "#"
      ? "parameters"
      : ref.startsWith("#/$defs/")
      ? ref.split("/").at(-1)!
      : "any";
    return { ts: () => name, docs: docsOf(s, []) };
  }
  if (Array.isArray(s.anyOf)) {
    const types = s.anyOf.map((t) => parseType(t, registry));
    return { ts: (indent) => types.map((t) => t.ts(indent)).join(" | "), docs: docsOf(s, []) };
  }
  if (Array.isArray(s.enum)) {
    const values = s.enum.map((e) => typeof e === "string" ? `"${e}"` : pythonJsonDumps(e));
    return { ts: () => values.join(" | "), docs: docsOf(s, []) };
  }
  if (Array.isArray(s.type)) {
    const names = s.type.map((t) => UNION_NAMES[String(t)] ?? String(t));
    return { ts: () => names.join(" | "), docs: docsOf(s, []) };
  }
  if (s.type === "object") return objectType(s, registry);
  if (s.type === "array") {
    const item = s.items ? parseType(s.items, registry) : scalar("any", {});
    return {
      docs: docsOf(s, ["maxItems", "minItems"]),
      ts(indent) {
        const docs = item.docs(indent + INDENT);
        if (!docs) return `Array<${item.ts(indent)}>`;
        return `Array<\n${docs}${indent + INDENT}${item.ts(indent + INDENT)}\n${indent}>`;
      },
    };
  }
  return scalar(typeof s.type === "string" ? s.type : "any", s);
}

function scalar(type: string, schema: Schema): TsType {
  const keys = type === "string"
    ? ["maxLength", "minLength", "pattern"]
    : type === "number" || type === "integer"
    ? ["maximum", "minimum"]
    : [];
  return { ts: () => type === "integer" ? "number" : type, docs: docsOf(schema, keys) };
}

function functionDeclaration(tool: ToolSpec): string {
  const registry: Registry = { defs: new Map(), selfRef: false };
  const params = (tool.parameters ?? {}) as Schema;
  const root = objectType(params, registry);
  const interfaces: string[] = [];
  if (registry.selfRef) {
    const members = root.members.map((m) => m.ts(INDENT)).join(",\n");
    interfaces.push(`interface parameters {${members ? `\n${members}\n` : ""}}`);
  }
  for (const [name, def] of registry.defs) {
    const body = parseType(def, registry).ts("");
    const description = (def as Schema | null)?.description;
    const head = typeof description === "string" && description ? comment(description) + "\n" : "";
    interfaces.push(`${head}interface ${name} ${body}`);
  }
  const signature = registry.selfRef ? "parameters" : root.ts("");
  return [
    interfaces.join("\n"),
    tool.description ? comment(tool.description) : "",
    `type ${tool.name} = (_: ${signature}) => any;`,
  ].filter((part) => part !== "").join("\n");
}

/** The `tool_declare` text for `tools` (`""` for none). */
export function kimiToolDeclarations(tools: readonly ToolSpec[]): string {
  if (tools.length === 0) return "";
  return `# Tools\n\n## functions\nnamespace functions {\n${
    tools.map(functionDeclaration).join("\n")
  }\n}\n`;
}
