/**
 * Prime-Qwen3's tool list, as Qwen3-Coder's template writes it: per tool
 *
 * ```
 * \n<function>\n<name>NAME</name>\n<description>DESCRIPTION (trimmed)</description>
 * \n<parameters>\n<parameter>\n<name>KEY</name>\n<type>TYPE</type>\n<description>…</description>
 * \n<OTHER>VALUE</OTHER>   (every other key of the parameter's schema, in its order)
 * \n</parameter>…\n<OTHER>VALUE</OTHER>   (every key of the parameters object but type and
 * properties: `required` too)\n</parameters>\n<OTHER>VALUE</OTHER> (other keys of the tool)
 * \n</function>
 * ```
 *
 * A description is written whenever the key is there (empty too). Values as Nemotron 3's
 * declarations write them (`declarationValue`: JSON for mappings and sequences, `str()` else).
 *
 * @module
 */
import type { ToolSpec } from "../../../canonical/mod.ts";
import { toTemplateTools } from "../../template_input.ts";
import { pythonStrip } from "../../python_json.ts";
import { declarationValue, pythonStr } from "../nemotron3/mod.ts";

function extraKeys(obj: Record<string, unknown>, handled: readonly string[]): string {
  return Object.entries(obj).filter(([k]) => !handled.includes(k))
    .map(([k, v]) => `\n<${k}>${declarationValue(v)}</${k}>`).join("");
}

/** The `\n<function>…\n</function>` blocks of `tools`, side by side. */
export function primeQwen3ToolDeclarations(tools: readonly ToolSpec[]): string {
  return toTemplateTools(tools).map(({ function: f }) => {
    const tool = f as unknown as Record<string, unknown>;
    let text = `\n<function>\n<name>${f.name}</name>`;
    if ("description" in tool) {
      text += `\n<description>${pythonStrip(String(tool.description))}</description>`;
    }
    text += "\n<parameters>";
    const params = f.parameters;
    if (params !== null && typeof params === "object" && !Array.isArray(params)) {
      const p = params as Record<string, unknown>;
      const properties = p.properties;
      if (properties !== null && typeof properties === "object" && !Array.isArray(properties)) {
        for (const [name, raw] of Object.entries(properties as Record<string, unknown>)) {
          text += `\n<parameter>\n<name>${name}</name>`;
          if (raw !== null && typeof raw === "object" && !Array.isArray(raw)) {
            const field = raw as Record<string, unknown>;
            if ("type" in field) text += `\n<type>${pythonStr(field.type)}</type>`;
            if ("description" in field) {
              text += `\n<description>${pythonStrip(String(field.description))}</description>`;
            }
            text += extraKeys(field, ["name", "type", "description"]);
          }
          text += "\n</parameter>";
        }
      }
      text += extraKeys(p, ["type", "properties"]);
    }
    return text + "\n</parameters>" +
      extraKeys(tool, ["type", "name", "description", "parameters"]) + "\n</function>";
  }).join("");
}
