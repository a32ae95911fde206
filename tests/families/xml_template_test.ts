/**
 * The Jinja path for XML tool calls (the qwen3-coder family, and the generic family with
 * `--tool-parser qwen3_coder`): a model directory whose chat template writes XML calls and reads
 * `arguments` as a mapping. Its template here is a test double written for these tests in the
 * Qwen3-Coder call format (`__fixtures__/xml_calls_template_double.jinja`), on the Qwen3
 * vocabulary; renders are checked against `transformers.apply_chat_template` on the same files.
 */
import assert from "node:assert/strict";
import { pythonStrip } from "../../model/mod.ts";
import type { AssistantMessage, Message, ToolSpec } from "../../canonical/mod.ts";
import { loadModelFiles } from "../../model/model_files.ts";
import { PolicyModel } from "../../model/policy_model.ts";
import { toTemplateMessages, toTemplateTools } from "../../model/template_input.ts";
import { generateConversations } from "../invariants/conversation_generator.ts";
import { renderWithTransformers } from "../reference/python_env.ts";
import { referenceMissing, skipGroup } from "../support/skips.ts";
import { registerFamilyChecks } from "./family_check.ts";
import { XML_MARKUP } from "./markup.ts";

const files = await loadModelFiles();
const DIR = await Deno.makeTempDir({ prefix: "rollgate-xml-template-" });
await Deno.symlink(files.tokenizerPath, `${DIR}/tokenizer.json`);
await Deno.writeTextFile(
  `${DIR}/tokenizer_config.json`,
  JSON.stringify({
    ...files.config,
    chat_template: await Deno.readTextFile(
      new URL("./__fixtures__/xml_calls_template_double.jinja", import.meta.url),
    ),
  }),
);

/** JSON with Python's separators and JavaScript's numbers (what `@huggingface/jinja` writes). */
function jinjaJson(v: unknown): string {
  if (typeof v === "number") return String(v);
  if (Array.isArray(v)) return `[${v.map(jinjaJson).join(", ")}]`;
  if (v !== null && typeof v === "object") {
    return `{${
      Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}: ${jinjaJson(x)}`).join(", ")
    }}`;
  }
  return JSON.stringify(v);
}

/**
 * What this template makes of a message: no reasoning, trimmed content, argument values through
 * JavaScript numbers (`tojson` in `@huggingface/jinja`; see `chat_template.ts`).
 */
function canonical(m: AssistantMessage): AssistantMessage {
  const out: AssistantMessage = { role: "assistant", content: pythonStrip(m.content) };
  if (m.tool_calls) {
    out.tool_calls = m.tool_calls.map((c) => ({
      ...c,
      arguments: jinjaJson(JSON.parse(c.arguments)),
    }));
  }
  return out;
}

const generator = { typedArguments: true, markup: XML_MARKUP };

registerFamilyChecks({
  label: "qwen3-coder (template double)",
  model: { dir: DIR },
  reference: null,
  generator,
  canonical,
  count: 60,
  firstSeed: 20001,
});

Deno.test("xml template: detected as qwen3-coder; generic + --tool-parser qwen3_coder reads the same", async () => {
  const coder = await PolicyModel.load({ dir: DIR });
  assert.equal(coder.family, "qwen3-coder");
  assert.equal(coder.format.quirks.promptOpensReasoning, false);
  const generic = await PolicyModel.load({
    dir: DIR,
    family: "generic",
    toolParser: "qwen3_coder",
  });
  const message = canonical({
    role: "assistant",
    content: "Writing.",
    tool_calls: [{ id: "c", name: "write_file", arguments: '{"path": "a</parameter>", "n": 2}' }],
  });
  const ids = await coder.renderAnswerIds(message);
  assert.deepEqual(await generic.renderAnswerIds(message), ids);
  const tools: ToolSpec[] = [{
    name: "write_file",
    kind: "function",
    parameters: {
      type: "object",
      properties: { path: { type: "string" }, n: { type: "integer" } },
    },
  }];
  for (const m of [coder, generic]) {
    const out = await m.parse(ids, () => "c", tools);
    assert.deepEqual(out.message, { ...message, tool_calls: [{ ...message.tool_calls![0] }] });
  }
});

Deno.test({
  name: "xml template: renders equal transformers apply_chat_template",
  ignore: skipGroup("transformers cross-check (XML template)", referenceMissing()),
  sanitizeResources: false,
  async fn() {
    const model = await PolicyModel.load({ dir: DIR });
    const cases = [], ours = [];
    let skipped = 0;
    for (const g of generateConversations(20001, 40, generator)) {
      const messages: Message[] = g.messages.map((m) => m.role === "assistant" ? canonical(m) : m);
      // Non-integral numbers print differently in JavaScript (`chat_template.ts`): left out.
      if (
        messages.some((m) =>
          m.role === "assistant" && /\d\.\d|\de-/.test(JSON.stringify(m.tool_calls ?? []))
        )
      ) {
        skipped++;
        continue;
      }
      const t = toTemplateTools(g.tools);
      cases.push({
        messages: toTemplateMessages(messages).map((m) =>
          m.tool_calls
            ? {
              ...m,
              tool_calls: m.tool_calls.map((c) => ({
                ...c,
                function: { ...c.function, arguments: JSON.parse(c.function.arguments) },
              })),
            }
            : m
        ),
        tools: t.length > 0 ? t : null,
        add_generation_prompt: true,
      });
      ours.push(await model.renderFull(messages, g.tools));
    }
    const results = await renderWithTransformers(DIR, cases);
    for (const [i, r] of results.entries()) {
      assert.equal(r.error, undefined, r.error);
      assert.equal(ours[i].text, r.text, `case ${i}`);
      assert.deepEqual(ours[i].ids, r.ids, `case ${i}`);
    }
    console.log(
      `${results.length} renders equal transformers; ${skipped} with fractional numbers left out`,
    );
    assert.ok(results.length >= 10);
  },
});

globalThis.addEventListener("unload", () => Deno.removeSync(DIR, { recursive: true }));
