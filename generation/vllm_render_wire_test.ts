import assert from "node:assert/strict";
import { PolicyModel } from "../model/mod.ts";
import { derenderBody, derenderedAnswer, renderBody, renderedIds } from "./vllm_render_wire.ts";
import { jsonWithIds } from "./ids_json.ts";
import { GenerationError } from "./backend.ts";
import { toolLoop, tools } from "./__fixtures__/vllm_render/conversation.ts";

/** A recorded exchange (`tests/engine/record_render_fixtures.ts`). */
interface Exchange {
  path: string;
  request: Record<string, unknown>;
  response: { status: number; body: unknown };
}

async function exchange(name: string): Promise<Exchange> {
  const url = new URL(`./__fixtures__/vllm_render/${name}.json`, import.meta.url);
  return JSON.parse(await Deno.readTextFile(url));
}

const where = "vLLM at test";

Deno.test("render body: the chat request vLLM reads (reasoning as reasoning, tools, model)", async () => {
  const recorded = await exchange("render_tool_loop");
  const body = renderBody(
    { messages: toolLoop, tools, templateKwargs: {}, addGenerationPrompt: true },
    "tiny",
  );
  assert.deepEqual(JSON.parse(jsonWithIds(body)), recorded.request);
  const assistant = (body.messages as Record<string, unknown>[])[2];
  assert.equal(assistant.reasoning, "I will look it up.");
  assert.equal("reasoning_content" in assistant, false);
  // Template variables go as chat_template_kwargs; none, no key.
  assert.equal("chat_template_kwargs" in body, false);
  const noThinking = await exchange("render_no_thinking");
  assert.deepEqual(noThinking.request.chat_template_kwargs, { enable_thinking: false });
});

Deno.test("render answer: vLLM's prompt ids are the Qwen3 template's, id for id", async () => {
  const model = await PolicyModel.load();
  for (
    const [name, messages] of [["render_tool_loop", toolLoop], [
      "render_first_turn",
      toolLoop.slice(0, 2),
    ]] as const
  ) {
    const recorded = await exchange(name);
    assert.equal(recorded.response.status, 200);
    const ids = renderedIds(recorded.response.body, where);
    assert.deepEqual(ids, (await model.renderFull(messages, tools)).ids, name);
  }
  const noThinking = renderedIds((await exchange("render_no_thinking")).response.body, where);
  assert.ok((await model.decode(noThinking)).endsWith("<think>\n\n</think>\n\n"));
});

Deno.test("render answer without token_ids is the engine's failure", async () => {
  const tooLong = await exchange("render_too_long");
  assert.equal(tooLong.response.status, 400);
  assert.throws(() => renderedIds(tooLong.response.body, where), GenerationError);
  assert.throws(() => renderedIds({ token_ids: [1, -2] }, where), /without token_ids/);
});

Deno.test("derender: the engine's parsers read reasoning and the tool call from the ids", async () => {
  const recorded = await exchange("derender_tool_call");
  const request = recorded.request as {
    generate_response: { choices: { token_ids: number[] }[]; prompt_token_ids: number[] };
  };
  const body = derenderBody({
    promptIds: Int32Array.from(request.generate_response.prompt_token_ids),
    outputIds: request.generate_response.choices[0].token_ids,
    tools,
    templateKwargs: {},
  });
  // The prompt goes as a typed array view, spliced into the JSON.
  assert.deepEqual(JSON.parse(jsonWithIds(body)), recorded.request);
  assert.deepEqual(derenderedAnswer(recorded.response.body, where), {
    content: "",
    reasoning: "\nI will look it up.\n",
    toolCalls: [{ name: "get_weather", arguments: '{"city": "Paris"}' }],
  });
  const plain = await exchange("derender_no_thinking");
  assert.deepEqual(derenderedAnswer(plain.response.body, where), {
    content: "Sunny, 21 °C.",
    toolCalls: [],
  });
});

Deno.test("derender answers that are not a message are the engine's failure", () => {
  assert.throws(() => derenderedAnswer({ choices: [] }, where), /without a message/);
  assert.throws(
    () => derenderedAnswer({ choices: [{ message: { content: 3 } }] }, where),
    /content that is not text/,
  );
  assert.throws(
    () => derenderedAnswer({ choices: [{ message: { content: "", tool_calls: {} } }] }, where),
    /not a list/,
  );
});
