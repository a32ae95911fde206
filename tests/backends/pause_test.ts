/**
 * Pause and drain for weight syncs: `POST /api/pause` holds new turns before any backend (they
 * wait, they are not refused), in-flight turns finish, `GET /api/status` counts both, and
 * `POST /api/resume` lets the held turns through.
 */
import assert from "node:assert/strict";
import { until } from "../support/until.ts";
import { type Rig, startRig } from "./engine_gateway.ts";

const ASK = {
  model: "policy",
  messages: [{ role: "user" as const, content: "What does the README say?" }],
};

/** `GET /api/status` without the delivery counts (`requests`, tested with the gate). */
async function status(rig: Rig) {
  const s = await rig.api("GET", "/status");
  assert.equal(s.status, 200);
  const { requests: _, ...rest } = s.json;
  return rest as { paused: boolean; in_flight: number; held: number; pending_requests: number };
}

Deno.test("pause holds new turns before the engine; resume releases them; status drains", async () => {
  const rig = await startRig();
  try {
    const a = await rig.rollout({ backend: "vllm" });
    const b = await rig.rollout({ backend: "vllm" });
    const c = await rig.rollout({ backend: "vllm" });
    const paused = await rig.api("POST", "/pause");
    assert.equal(paused.status, 200);
    assert.deepEqual(paused.json, {
      paused: true,
      in_flight: 0,
      held: 0,
      pending_requests: 0,
      requests: { queued: 0, delivered: 0, leased: 0, redelivered: 0, withdrawn: 0 },
    });

    // Held, not refused: the engine receives nothing while paused.
    rig.vllm.behaviours.push("hold");
    const first = rig.agent(a).chat.completions.create(ASK);
    await until(async () => (await status(rig)).held === 1, "turn A held");
    assert.equal(rig.vllm.generations.items.length, 0);

    // A held turn whose client leaves drops out of the hold.
    const leaving = new AbortController();
    const gone = rig.agent(c).chat.completions.create(ASK, { signal: leaving.signal });
    await until(async () => (await status(rig)).held === 2, "turn C held");
    leaving.abort();
    await assert.rejects(gone);
    await until(async () => (await status(rig)).held === 1, "turn C left the hold");

    const resumed = await rig.api("POST", "/resume");
    assert.equal(resumed.json.paused, false);
    await rig.vllm.generations.when();
    assert.deepEqual(await status(rig), {
      paused: false,
      in_flight: 1,
      held: 0,
      pending_requests: 0,
    });

    // Pause while A is in flight: A keeps running, the new turn B waits.
    await rig.api("POST", "/pause");
    const second = rig.agent(b).chat.completions.create(ASK);
    await until(async () => (await status(rig)).held === 1, "turn B held");
    assert.equal(rig.vllm.generations.items.length, 1);
    assert.equal((await status(rig)).in_flight, 1);

    rig.vllm.release();
    const answerA = await first;
    assert.equal(answerA.choices[0].finish_reason, "tool_calls");
    await until(async () => (await status(rig)).in_flight === 0, "drained");
    assert.deepEqual(await status(rig), {
      paused: true,
      in_flight: 0,
      held: 1,
      pending_requests: 0,
    });
    assert.equal(rig.vllm.generations.items.length, 1, "B still held after the drain");

    await rig.api("POST", "/resume");
    const answerB = await second;
    assert.equal(answerB.choices[0].finish_reason, "tool_calls");
    assert.equal(rig.vllm.generations.items.length, 2);
    assert.equal(rig.vllm.generations.items[1].headers.get("x-session-id"), b.id);
    assert.deepEqual(await status(rig), {
      paused: false,
      in_flight: 0,
      held: 0,
      pending_requests: 0,
    });
  } finally {
    await rig.close();
  }
});

Deno.test("pause holds gate turns too; status counts the gate's pending requests", async () => {
  const rig = await startRig();
  try {
    const r = await rig.rollout({ backend: "gate" });
    await rig.api("POST", "/pause");
    const agentCall = rig.agent(r).chat.completions.create(ASK).then(
      () => null,
      (e: Error) => e,
    );
    await until(async () => (await status(rig)).held === 1, "gate turn held");
    const none = await rig.api("GET", "/requests/next?wait=0");
    assert.equal(none.status, 204, "the trainer sees no request while paused");

    await rig.api("POST", "/resume");
    await until(async () => (await status(rig)).pending_requests === 1, "gate request pending");
    assert.deepEqual(await status(rig), {
      paused: false,
      in_flight: 1,
      held: 0,
      pending_requests: 1,
    });
    const next = await rig.api("GET", "/requests/next?wait=5");
    assert.equal(next.json.rollout_id, r.id);
    const ids = await rig.model.tokenizer.encode("<think>\nok\n</think>\n\nHello.<|im_end|>");
    const done = await rig.api("POST", `/requests/${next.json.request_id}/complete`, {
      output_ids: ids,
      finish_reason: "stop",
    });
    assert.equal(done.status, 200, JSON.stringify(done.json));
    assert.equal(await agentCall, null);
    assert.deepEqual(await status(rig), {
      paused: false,
      in_flight: 0,
      held: 0,
      pending_requests: 0,
    });
  } finally {
    await rig.close();
  }
});
