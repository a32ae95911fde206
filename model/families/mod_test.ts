import assert from "node:assert/strict";
import { DEFAULT_MODEL_DIR, loadModelFiles } from "../model_files.ts";
import { PolicyModel } from "../policy_model.ts";
import { loadTokenizer } from "../tokenizer.ts";
import {
  bindFamily,
  detectFamily,
  FAMILIES,
  FamilyError,
  familyNamed,
  TOOL_PARSERS,
} from "./mod.ts";

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
  "qwen3-coder": XML,
  "deepseek-v3.1":
    "{{ '<｜Assistant｜></think>' }}{{ '<｜tool▁call▁begin｜>' + name + '<｜tool▁sep｜>' + args }}",
  generic:
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}",
};

/** DeepSeek V3 and R1 write `function<｜tool▁sep｜>NAME` and a json fence: not V3.1. */
const DEEPSEEK_V3_STYLE =
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
  const v3 = await modelDir(DEEPSEEK_V3_STYLE);
  assert.equal(detectFamily(await loadModelFiles(v3)).name, "generic");
  await Deno.remove(v3, { recursive: true });
  assert.deepEqual(FAMILIES.map((f) => f.name), [
    "gpt-oss",
    "qwen3.6",
    "qwen3.5",
    "qwen3-coder",
    "qwen3",
    "deepseek-v3.1",
  ]);
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
    /unknown tool parser nope; known: hermes, qwen3_coder, openai, deepseek_v31, none/,
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
