/**
 * The generic family: any model directory with a Jinja chat template that no family claims.
 * The model's own template renders (exact by construction); the output is read by the parser
 * named with `--tool-parser` (`hermes`, `qwen3_coder`, …; default `none`: all output is text, and
 * text in a known tool-call markup is counted as malformed, never passed off as a plain answer).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelFiles } from "../../model_files.ts";
 * import { generic } from "./mod.ts";
 *
 * // Model files with only a chat template (and added tokens): enough to detect a family.
 * const files = (chat_template: string, added: string[] = []) =>
 *   ({
 *     config: {
 *       chat_template,
 *       added_tokens_decoder: Object.fromEntries(added.map((content, i) => [i, { content }])),
 *     },
 *   }) as unknown as ModelFiles;
 * // Any directory with a Jinja chat template; its output is read by `--tool-parser`.
 * assert.ok(generic.detect(files("{% for m in messages %}{{ m.content }}{% endfor %}")));
 * assert.equal(generic.name, "generic");
 * ```
 *
 * @module
 */
import type { ChatFormat, FamilyContext, ModelFamily } from "../family.ts";
import { bindJinjaFormat } from "../jinja_format.ts";
import { requireToolParser } from "../tool_parsers.ts";

async function bind(ctx: FamilyContext): Promise<ChatFormat> {
  const name = ctx.toolParser ?? "none";
  const parser = requireToolParser(name);
  const template = ctx.files.config.chat_template ?? "";
  const format = await bindJinjaFormat(ctx, {
    family: "generic",
    // Templates that test `arguments is string` take the JSON text (kept verbatim); the others
    // expect a mapping.
    argumentsAsObject: !/arguments\s+is\s+string/.test(template),
    argumentRendering: "as the model's chat template writes them",
    output: parser.create,
  });
  const notes = [`generic family: the model's chat template, tool parser ${name}`];
  if (name === "none" && template.includes("tool_calls")) {
    notes.push(
      "the chat template renders tool calls but no --tool-parser was given: the policy's " +
        "calls are answered as text and counted as malformed",
    );
  }
  return { ...format, notes };
}

export const generic: ModelFamily = {
  name: "generic",
  // The model's own template: whatever variables it reads.
  templateOptions: "any",
  summary: "any model directory with a Jinja chat template; output read by --tool-parser",
  detect: (files) => typeof files.config.chat_template === "string",
  bind,
};
