/**
 * vLLM asked to stream (`stream: true`): the sampled ids reach the agent while the engine is
 * still generating (the fake engine pauses its stream halfway), and the recorded turn and sample
 * are the same as without streaming.
 */
import assert from "node:assert/strict";
import { parseSseText } from "../../generation/mod.ts";
import { engineLogprob } from "./fake_engines.ts";
import { READ_FILE, startRig } from "./engine_gateway.ts";

const USER = { role: "user" as const, content: "What does the README say?" };

async function readUntil(reader: ReadableStreamDefaultReader<string>, until: RegExp) {
  let text = "";
  while (!until.test(text)) {
    const { done, value } = await reader.read();
    if (done) break;
    text += value;
  }
  return text;
}

Deno.test("vLLM streaming: reasoning reaches the agent before the engine finishes", async () => {
  const rig = await startRig({ vllmStream: true });
  try {
    const r = await rig.rollout({ backend: "vllm" });
    rig.vllm.behaviours.push("hold");
    const res = await fetch(`${r.base_url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${r.token}` },
      body: JSON.stringify({ model: "policy", stream: true, messages: [USER], tools: [READ_FILE] }),
    });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    const early = await readUntil(reader, /reasoning_content":"I should/);
    assert.match(early, /reasoning_content":"I should/, "reasoning arrived mid-generation");
    assert.doesNotMatch(early, /tool_calls/, "the tool call waits for the end");
    const generation = await rig.vllm.generations.when();
    assert.equal(generation.body.stream, true);

    rig.vllm.release();
    const rest = early + await readUntil(reader, /\[DONE\]/);
    await reader.cancel();
    const chunks = parseSseText(rest).events.filter((e) => e.data.startsWith("{"))
      .map((e) => JSON.parse(e.data));
    const reasoning = chunks.map((c) => c.choices[0]?.delta?.reasoning_content ?? "").join("");
    assert.equal(reasoning, "I should read the README.");
    const call = chunks.find((c) => c.choices[0]?.delta?.tool_calls)?.choices[0].delta
      .tool_calls[0];
    assert.equal(call.function.name, "read_file");

    const { samples } = (await rig.api("POST", `/rollouts/${r.id}/finish`, { reward: 1 })).json;
    assert.equal(samples.length, 1);
    const sampled = samples[0].input_ids.filter((_: number, i: number) =>
      samples[0].loss_mask[i] === 1
    );
    assert.deepEqual(sampled, generation.output);
    const lps = samples[0].logprobs.filter((_: number, i: number) => samples[0].loss_mask[i] === 1);
    assert.deepEqual(lps, generation.output!.map((_, i) => engineLogprob(i)));
    const turns = (await rig.api("GET", `/rollouts/${r.id}`)).json.turn_list;
    assert.equal(turns[0].weight_version, "w-7");
  } finally {
    await rig.close();
  }
});

Deno.test("vLLM streaming: a non-streaming agent gets the same recorded answer", async () => {
  const rig = await startRig({ vllmStream: true });
  try {
    const r = await rig.rollout({ backend: "vllm" });
    const client = rig.agent(r);
    const answer = await client.chat.completions.create({
      model: "policy",
      messages: [USER],
      tools: [READ_FILE],
    });
    assert.equal(answer.choices[0].finish_reason, "tool_calls");
    assert.equal(answer.choices[0].message.tool_calls?.length, 1);
    const turns = (await rig.api("GET", `/rollouts/${r.id}`)).json.turn_list;
    assert.equal(turns[0].output_length, rig.vllm.generations.items[0].output!.length);
  } finally {
    await rig.close();
  }
});
