/**
 * `main.ts serve --model-dir` on the gpt-oss tokenizer files, as a real process over real
 * sockets: the family is detected from harmony's special tokens (no chat template), the trainer
 * answers with harmony ids (reasoning, a `to=functions.NAME` call ending `<|call|>`), the agent
 * gets the parsed call, and the next prompt carries the tool result authored by the tool, after
 * the sampled ids kept verbatim.
 */
import assert from "node:assert/strict";
import { PolicyModel } from "../../model/mod.ts";
import { startGateway } from "../support/gateway_process.ts";
import { within } from "../support/within.ts";
import { GPT_OSS_DIR } from "../support/gpt_oss_model.ts";

const json = { "content-type": "application/json" };
const tools = [{
  type: "function",
  function: {
    name: "bash",
    parameters: { type: "object", properties: { command: { type: "string" } } },
  },
}];

Deno.test("serve --model-dir gpt-oss: detected; the agent gets the harmony call; the result follows it", async () => {
  const kwargs = '{"conversation_start_date": "2026-11-24"}';
  const gw = await startGateway(["--model-dir", GPT_OSS_DIR, "--template-kwargs", kwargs]);
  try {
    assert.match(gw.output(), /family gpt-oss/);
    const model = await PolicyModel.load({
      dir: GPT_OSS_DIR,
      templateKwargs: JSON.parse(kwargs),
    });
    const created = await (await fetch(`${gw.url}/api/rollouts`, {
      method: "POST",
      headers: json,
      body: "{}",
    })).json();
    const ask = (messages: unknown[]) =>
      fetch(`${created.base_url}/v1/chat/completions`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ model: "m", messages, tools }),
      }).then((r) => r.json());
    const complete = async (requestId: string, text: string) => {
      const done = await fetch(`${gw.url}/api/requests/${requestId}/complete`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({
          output_ids: await model.tokenizer.encode(text),
          finish_reason: "stop",
        }),
      });
      assert.equal(done.status, 200, await done.text());
    };

    const user = { role: "user", content: "list files" };
    const first = ask([user]);
    const next = await (await fetch(`${gw.url}/api/requests/next?wait=30`)).json();
    const prompt = await model.decode(next.prompt_ids);
    // harmony's completion prompt: the policy opens the channel itself.
    assert.ok(prompt.endsWith("<|start|>assistant"), prompt.slice(-80));
    assert.match(prompt, /Current date: 2026-11-24/);
    assert.match(prompt, /namespace functions \{/);
    const ends = ["<|return|>", "<|call|>"].map((t) => model.idOf(t)!);
    assert.deepEqual([...next.sampling.stop_token_ids].sort(), [...ends].sort());
    const sampled = "<|channel|>analysis<|message|>Look first.<|end|><|start|>assistant" +
      '<|channel|>commentary to=functions.bash <|constrain|>json<|message|>{"command": "ls"}' +
      "<|call|>";
    await complete(next.request_id, sampled);
    const answer = await within("the agent's first answer", 30_000, first, gw.output);
    const message = answer.choices[0].message;
    assert.equal(answer.choices[0].finish_reason, "tool_calls");
    assert.equal(message.reasoning_content, "Look first.");
    assert.deepEqual(message.tool_calls.map((c: { function: unknown }) => c.function), [
      { name: "bash", arguments: '{"command": "ls"}' },
    ]);

    // The tool message carries no name: harmony's author comes from the call it answers.
    const second = ask([user, message, {
      role: "tool",
      tool_call_id: message.tool_calls[0].id,
      content: "a.txt",
    }]);
    const next2 = await (await fetch(`${gw.url}/api/requests/next?wait=30`)).json();
    const prompt2 = await model.decode(next2.prompt_ids);
    assert.ok(
      prompt2.endsWith(
        sampled + "<|start|>functions.bash to=assistant<|channel|>commentary<|message|>" +
          "a.txt<|end|><|start|>assistant",
      ),
      prompt2.slice(-300),
    );
    assert.deepEqual(next2.prompt_ids.slice(0, next.prompt_ids.length), next.prompt_ids);
    await complete(next2.request_id, "<|channel|>final<|message|>One file.<|return|>");
    const done = await within("the agent's second answer", 30_000, second, gw.output);
    assert.equal(done.choices[0].finish_reason, "stop");
    assert.equal(done.choices[0].message.content, "One file.");
  } finally {
    await gw.stop();
  }
});
