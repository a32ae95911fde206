/**
 * The tool lists real agent CLIs send (Claude Code 2.1.330, Codex 0.169.0, pi 0.73.1, Gemini CLI
 * 0.61.0, from the recorded traffic in `gateway/*\/__fixtures__/`), as canonical tools: the schemas a family's tool
 * declarations must render as its reference does (descriptions with newlines, enums, arrays of
 * objects, `additionalProperties: false`, defaults).
 *
 * @module
 */
import type { ToolSpec } from "../../canonical/mod.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

function firstBody(path: string): Json {
  const line = Deno.readTextFileSync(new URL(path, import.meta.url)).split("\n")[0];
  return JSON.parse(line).body;
}

/** Per CLI: its name and its tools. */
export function cliToolLists(): { cli: string; tools: ToolSpec[] }[] {
  const spec = (name: string, description: string | undefined, parameters: Json): ToolSpec => {
    const t: ToolSpec = { name, kind: "function", parameters };
    if (description !== undefined) t.description = description;
    return t;
  };
  const claude = firstBody("../../gateway/agent/anthropic/__fixtures__/claude-code-2.1.330.jsonl");
  const codex = firstBody("../../gateway/agent/responses/__fixtures__/codex-0.169.0.jsonl");
  const pi = firstBody("../../gateway/agent/openai_chat/__fixtures__/pi-0.73.1.jsonl");
  const gemini = firstBody(
    "../../gateway/agent/gemini/__fixtures__/gemini-cli-0.61.0.scenario.jsonl",
  );
  return [
    {
      cli: "claude-code",
      tools: claude.tools.map((t: Json) => spec(t.name, t.description, t.input_schema)),
    },
    {
      cli: "codex",
      tools: codex.tools.filter((t: Json) => t.type === "function").map((t: Json) =>
        spec(t.name, t.description, t.parameters)
      ),
    },
    {
      cli: "pi",
      tools: pi.tools.map((t: Json) =>
        spec(t.function.name, t.function.description, t.function.parameters)
      ),
    },
    {
      cli: "gemini-cli",
      tools: gemini.tools.flatMap((t: Json) => t.functionDeclarations ?? []).map((d: Json) =>
        spec(d.name, d.description, d.parametersJsonSchema)
      ),
    },
  ];
}
