/**
 * Records `generation/__fixtures__/vllm_render/`: real request bodies (as `vllm_render_wire.ts`
 * builds them) and the real vLLM's answers to its render API, for the pure wire tests
 * (`generation/vllm_render_wire_test.ts`). Starts the CPU vLLM on the tiny Qwen3 with the tool and
 * reasoning parsers, records, stops it:
 *
 *     node_modules/.bin/deno run -A tests/engine/record_render_fixtures.ts
 *
 * @module
 */
import { derenderBody, renderBody, renderedIds } from "../../generation/vllm_render_wire.ts";
import { PolicyModel } from "../../model/mod.ts";
import { startVllm, tinyQwen3 } from "../support/vllm_server.ts";
import { toolLoop, tools } from "../../generation/__fixtures__/vllm_render/conversation.ts";

const OUT = new URL("../../generation/__fixtures__/vllm_render/", import.meta.url).pathname;
const SERVER_ARGS = [
  "--enable-scale-out",
  "--enable-auto-tool-choice",
  "--tool-call-parser",
  "hermes",
  "--reasoning-parser",
  "qwen3",
];

const TOOL_CALL = "<think>\nI will look it up.\n</think>\n\n<tool_call>\n" +
  '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';

const server = await startVllm({ model: await tinyQwen3(), args: SERVER_ARGS, maxModelLen: 2048 });
const model = await PolicyModel.load();
const post = async (path: string, body: unknown) => {
  const res = await fetch(server.url + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
};
const save = async (name: string, path: string, request: unknown) => {
  const response = await post(path, request);
  const recorded = `vLLM 0.32.0 CPU (${SERVER_ARGS.join(" ")}), tiny Qwen3`;
  await Deno.writeTextFile(
    `${OUT}${name}.json`,
    JSON.stringify({ recorded, path, request, response }, null, 1) + "\n",
  );
  return response;
};
try {
  await Deno.mkdir(OUT, { recursive: true });
  const noKwargs = { templateKwargs: {}, addGenerationPrompt: true };
  await save(
    "render_tool_loop",
    "/v1/chat/completions/render",
    renderBody({ messages: toolLoop, tools, ...noKwargs }, server.servedName),
  );
  const first = await save(
    "render_first_turn",
    "/v1/chat/completions/render",
    renderBody({ messages: toolLoop.slice(0, 2), tools, ...noKwargs }),
  );
  await save(
    "render_no_thinking",
    "/v1/chat/completions/render",
    renderBody({
      messages: [{ role: "user", content: "hi" }],
      tools: [],
      templateKwargs: { enable_thinking: false },
      addGenerationPrompt: true,
    }),
  );
  const promptIds = renderedIds(first.body, "recording");
  await save(
    "derender_tool_call",
    "/v1/chat/completions/derender",
    derenderBody({
      promptIds,
      outputIds: await model.tokenizer.encode(TOOL_CALL),
      tools,
      templateKwargs: {},
    }),
  );
  await save(
    "derender_no_thinking",
    "/v1/chat/completions/derender",
    derenderBody({
      promptIds,
      outputIds: await model.tokenizer.encode("Sunny, 21 °C."),
      tools,
      templateKwargs: { enable_thinking: false },
    }),
  );
  await save(
    "render_too_long",
    "/v1/chat/completions/render",
    renderBody({
      messages: [{ role: "user", content: "word ".repeat(3_000) }],
      tools: [],
      ...noKwargs,
    }),
  );
  await save(
    "render_unknown_model",
    "/v1/chat/completions/render",
    renderBody({ messages: [{ role: "user", content: "hi" }], tools: [], ...noKwargs }, "nope"),
  );
} finally {
  await server.stop();
}
