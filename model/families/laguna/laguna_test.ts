import assert from "node:assert/strict";
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import {
  LAGUNA_XS2_TEMPLATE_DOUBLE,
  TEMPLATE_DOUBLES,
  tokenizerDoubleDir,
} from "../../../tests/support/tokenizer_doubles.ts";
import { PolicyModel } from "../../policy_model.ts";
import { lagunaLayout } from "./mod.ts";

// A tokenizer double: the Qwen3 vocabulary plus Laguna's special tokens (no package ships it).
const DIR = await tokenizerDoubleDir("laguna");
globalThis.addEventListener("unload", () => Deno.removeSync(DIR, { recursive: true }));
const laguna = await PolicyModel.load({ dir: DIR });

const tools: ToolSpec[] = [{
  name: "bash",
  kind: "function",
  parameters: {
    type: "object",
    properties: { command: { type: "string" }, n: { type: "integer" } },
  },
}];

Deno.test("laguna: detected with its layout; renders the 2.1 format, thinking off by default", async () => {
  assert.equal(laguna.family, "laguna");
  assert.equal(lagunaLayout(TEMPLATE_DOUBLES.laguna), "xs-2.1");
  assert.equal(lagunaLayout(TEMPLATE_DOUBLES.laguna + "preserve_thinking"), "s-2.1");
  assert.equal(lagunaLayout(LAGUNA_XS2_TEMPLATE_DOUBLE), "xs.2");
  assert.equal(lagunaLayout(LAGUNA_XS2_TEMPLATE_DOUBLE.replace("made by Poolside", "")), "m.1");
  assert.equal(lagunaLayout("<|im_start|>user"), null);
  await assert.rejects(
    PolicyModel.load({ dir: DIR, templateKwargs: { enable_thinking: "yes" } }),
    /laguna: template variable enable_thinking is "yes"; expected one of true, false/,
  );
  assert.equal(laguna.tokenizer.addedTokens.has("<tool_response>"), false);
  const messages: Message[] = [
    { role: "system", content: "Be brief.  " },
    { role: "user", content: "List" },
    {
      role: "assistant",
      content: " Listing ",
      reasoning_content: "not shown with thinking off",
      tool_calls: [{ id: "a", name: "bash", arguments: '{"command": "ls", "n": 2}' }],
    },
    { role: "tool", content: "a.py", tool_call_id: "a" },
  ];
  assert.equal(
    (await laguna.renderFull(messages, tools)).text,
    "〈|EOS|〉<system>Be brief.\n\n### Tools\n\nYou may call functions to assist with the user query." +
      "\nAll available function signatures are listed below:\n<available_tools>\n" +
      '{"type": "function", "function": {"name": "bash", "parameters": {"type": "object", ' +
      '"properties": {"command": {"type": "string"}, "n": {"type": "integer"}}}}}\n' +
      "</available_tools></system>\n<user>List</user>\n<assistant></think> Listing " +
      "<tool_call>bash<arg_key>command</arg_key><arg_value>ls</arg_value><arg_key>n</arg_key>" +
      "<arg_value>2</arg_value></tool_call></assistant>\n<tool_response>a.py</tool_response>\n" +
      "<assistant></think>",
  );
  const delta = await laguna.renderDeltaIds([{ role: "user", content: "more" }]);
  assert.equal(delta.text, "\n<user>more</user>\n<assistant></think>");
});

Deno.test("laguna: thinking answers round-trip verbatim; calls typed by schema", async () => {
  const thinking = await PolicyModel.load({ dir: DIR, templateKwargs: { enable_thinking: true } });
  const message: AssistantMessage = {
    role: "assistant",
    content: "\n Running ",
    reasoning_content: " plan ",
    tool_calls: [{ id: "x", name: "bash", arguments: '{"command": "a</arg_value>b", "n": 3}' }],
  };
  const sampled = await thinking.renderAnswerIds(message);
  const out = await thinking.parse(sampled, () => "x", tools);
  assert.deepEqual(out.message, message);
  assert.equal(out.malformedToolCalls, 0);
  const text = (await thinking.renderFull([{ role: "user", content: "q" }, message], tools)).text;
  assert.ok(text.includes("<assistant><think> plan </think>\n Running <tool_call>bash"));
});
