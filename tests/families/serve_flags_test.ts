/**
 * `main.ts serve --model-family / --tool-parser / --template-kwargs` as a real process over real
 * sockets: an agent request through the trainer gate, the trainer answering with Qwen3.5 ids
 * (XML tool call) and the agent getting the parsed call; bad flags end the process with one line.
 */
import assert from "node:assert/strict";
import { PolicyModel } from "../../model/mod.ts";
import { DENO, startGateway } from "../support/gateway_process.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("serve --model-family qwen3.5: the agent gets the XML call the policy wrote", async () => {
  const gw = await startGateway([
    "--model-family",
    "qwen3.5",
    "--template-kwargs",
    '{"enable_thinking": true}',
  ]);
  try {
    assert.match(gw.output(), /family qwen3\.5/);
    const model = await PolicyModel.load({ family: "qwen3.5" });
    const json = { "content-type": "application/json" };
    const created = await (await fetch(`${gw.url}/api/rollouts`, {
      method: "POST",
      headers: json,
      body: "{}",
    })).json();
    const agent = fetch(`${created.base_url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "m",
        messages: [{ role: "user", content: "list files" }],
        tools: [{
          type: "function",
          function: {
            name: "bash",
            parameters: {
              type: "object",
              properties: { command: { type: "string" }, n: { type: "integer" } },
            },
          },
        }],
      }),
    });
    const next = await (await fetch(`${gw.url}/api/requests/next?wait=30`)).json();
    // The prompt is the Qwen3.5 render: the generation prompt opens reasoning.
    assert.ok((await model.decode(next.prompt_ids)).endsWith("<|im_start|>assistant\n<think>\n"));
    const output = await model.tokenizer.encode(
      "Plan.\n</think>\n\n<tool_call>\n<function=bash>\n<parameter=command>\nls </parameter> x\n" +
        "</parameter>\n<parameter=n>\n2\n</parameter>\n</function>\n</tool_call><|im_end|>",
    );
    const done = await fetch(`${gw.url}/api/requests/${next.request_id}/complete`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ output_ids: output, finish_reason: "stop" }),
    });
    assert.equal(done.status, 200, await done.text());
    const answer = await (await agent).json();
    const message = answer.choices[0].message;
    assert.equal(message.reasoning_content, "Plan.");
    assert.equal(answer.choices[0].finish_reason, "tool_calls");
    assert.deepEqual(message.tool_calls.map((c: { function: unknown }) => c.function), [
      { name: "bash", arguments: '{"command": "ls </parameter> x", "n": 2}' },
    ]);
  } finally {
    await gw.stop();
  }
});

Deno.test("serve: an unknown family or tool parser, or bad template kwargs, is one line", async () => {
  for (
    const [args, message] of [
      // The list grows with the registry: check membership and the Qwen order, not the whole line.
      [
        ["--model-family", "nope"],
        /unknown model family nope; known: (?=.*gpt-oss).*qwen3\.6, qwen3\.5/,
      ],
      [["--tool-parser", "nope", "--model-family", "generic"], /unknown tool parser nope/],
      [["--template-kwargs", "[1]"], /--template-kwargs must be a JSON object/],
    ] as const
  ) {
    const out = await new Deno.Command(DENO, {
      args: ["run", "-A", ROOT + "main.ts", "serve", "--port", "1", ...args],
      cwd: ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 1);
    assert.match(new TextDecoder().decode(out.stderr), message);
  }
});
