/**
 * Engine failures seen by the agent through the real gateway: client disconnect aborts the engine
 * request, timeouts become errors, failures before any response byte are retried, failures after
 * a response started are not.
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import { type Rig, startRig } from "./engine_gateway.ts";

const ASK = {
  model: "policy",
  messages: [{ role: "user" as const, content: "hi" }],
};

/** The agent's request, expected to fail; returns the SDK error. */
async function failing(rig: Rig, backend: string): Promise<InstanceType<typeof OpenAI.APIError>> {
  const r = await rig.rollout({ backend });
  try {
    await rig.agent(r).chat.completions.create(ASK);
  } catch (e) {
    assert.ok(e instanceof OpenAI.APIError, String(e));
    return e;
  }
  throw new Error("the request succeeded");
}

for (const backend of ["vllm", "sglang"] as const) {
  Deno.test(`${backend}: a client disconnect aborts the engine request`, async () => {
    const rig = await startRig();
    try {
      const engine = rig[backend];
      engine.behaviours.push("hang");
      const r = await rig.rollout({ backend });
      const controller = new AbortController();
      const agentCall = rig.agent(r).chat.completions.create(
        { ...ASK, stream: backend === "sglang" },
        { signal: controller.signal },
      ).then(async (s) => {
        // deno-lint-ignore no-explicit-any
        for await (const _ of s as any) { /* drain */ }
      });
      const got = await engine.generations.when();
      controller.abort();
      // The SDK rejects an aborted request; an aborted stream just ends.
      await agentCall.then(() => assert.equal(backend, "sglang"), () => {});
      if (backend === "sglang") {
        const abort = await rig.sglang.aborts.when();
        assert.equal(abort.rid, got.body.rid, "SGLang is told which request to abort");
      }
      await engine.cancelled.when((c) => c === got);
      const info = await rig.api("GET", `/rollouts/${r.id}`);
      assert.equal(info.json.turn_list[0].status, "failed");
      assert.match(info.json.turn_list[0].error, /agent disconnected and did not retry/);
    } finally {
      await rig.close();
    }
  });

  Deno.test(`${backend}: an engine timeout is an error for the agent`, async () => {
    const rig = await startRig({ timeoutMs: 300, retries: 0 });
    try {
      const engine = rig[backend];
      engine.behaviours.push("hang");
      const e = await failing(rig, backend);
      assert.equal(e.status, 504);
      assert.match(e.message, /timed out/);
      assert.ok(e.message.includes(engine.url), `the message names the engine URL: ${e.message}`);
      const got = await engine.generations.when();
      if (backend === "sglang") {
        assert.equal((await rig.sglang.aborts.when()).rid, got.body.rid);
      } else {
        await engine.cancelled.when((c) => c === got);
      }
    } finally {
      await rig.close();
    }
  });

  Deno.test(`${backend}: a 503 before any byte is retried and the turn succeeds`, async () => {
    const rig = await startRig({ retries: 2 });
    try {
      const engine = rig[backend];
      engine.behaviours.push("503");
      const r = await rig.rollout({ backend });
      const answer = await rig.agent(r).chat.completions.create({
        ...ASK,
        messages: [{ role: "user", content: "What does the README say?" }],
      });
      assert.equal(answer.choices[0].finish_reason, "tool_calls");
      const [first, second] = engine.generations.items;
      assert.equal(engine.generations.items.length, 2);
      if (backend === "sglang") {
        assert.equal(second.body.rid, `${first.body.rid}-retry1`, "a retry gets its own rid");
        assert.deepEqual(second.body.input_ids, first.body.input_ids);
      } else {
        assert.deepEqual(second.body, first.body);
      }
    } finally {
      await rig.close();
    }
  });

  Deno.test(`${backend}: a response broken off midway is not retried`, async () => {
    const rig = await startRig({ retries: 2 });
    try {
      const engine = rig[backend];
      engine.behaviours.push("partial");
      const e = await failing(rig, backend);
      assert.equal(e.status, 502);
      assert.match(e.message, /broke off its answer/);
      assert.ok(e.message.includes(engine.url), e.message);
      assert.equal(engine.generations.items.length, 1, "no second attempt after a partial answer");
      if (backend === "sglang") {
        const got = engine.generations.items[0];
        assert.equal((await rig.sglang.aborts.when()).rid, got.body.rid);
      }
    } finally {
      await rig.close();
    }
  });

  Deno.test(`${backend}: an unreachable engine fails after the bounded retries`, async () => {
    const rig = await startRig({ retries: 1 });
    try {
      const url = rig[backend].url;
      await rig[backend].close();
      const e = await failing(rig, backend);
      assert.equal(e.status, 502);
      assert.match(e.message, /unreachable.*gave up after 2 attempts/s);
      assert.ok(e.message.includes(url), e.message);
    } finally {
      await rig.close();
    }
  });
}
