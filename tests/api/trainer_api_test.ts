/**
 * The trainer API over real HTTP: rollouts (create, list, get, delete, finish), the long poll for
 * pending requests and its filter, sampling parameters (rollout defaults, clamping to the
 * context), SSE keep-alives while the trainer thinks, and samples.
 *
 * @module
 */
import assert from "node:assert/strict";
import { PolicyModel } from "../../model/mod.ts";
import { scriptedLogprob, sharedModel } from "../support/scripted_policy.ts";
import {
  agentCall,
  type ApiResult,
  FINAL_TEXT,
  getRollout,
  parseSse,
  READ_FILE_TOOL,
  type RolloutHandle,
  take,
  type TestGateway,
  TOOL_RESULT,
  withGateway,
} from "./loopback_gateway.ts";

function chat(content: string, extra: Record<string, unknown> = {}) {
  return { model: "m", messages: [{ role: "user", content }], ...extra };
}

async function completeWith(gw: TestGateway, requestId: string, text: string) {
  const output_ids = await gw.gw.model.tokenizer.encode(text);
  const r = await gw.api("POST", `/requests/${requestId}/complete`, {
    output_ids,
    finish_reason: "stop",
  });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return output_ids;
}

Deno.test("rollouts: create, duplicate, list, get", async () => {
  await withGateway({}, async (gw) => {
    const created = await gw.api("POST", "/rollouts", {
      id: "task-1:attempt.0",
      metadata: { task: "fix-the-bug", attempt: 0 },
      sampling: { temperature: 0.7 },
    });
    assert.equal(created.status, 201);
    assert.equal(created.json.id, "task-1:attempt.0");
    assert.match(created.json.token, /^rg_[0-9a-f]{48}$/);
    assert.equal(created.json.base_url, `${gw.url}/rollout/task-1:attempt.0`);
    assert.ok(created.json.base_url.endsWith(`/rollout/${created.json.id}`));

    // No id: one is generated. An empty POST (no body at all) is a valid create too.
    const generated = await gw.api("POST", "/rollouts", {});
    assert.equal(generated.status, 201);
    assert.match(generated.json.id, /^r_[0-9a-f]+$/);
    assert.ok(generated.json.base_url.endsWith(`/rollout/${generated.json.id}`));
    assert.notEqual(generated.json.token, created.json.token);
    const bare = await fetch(`${gw.url}/api/rollouts`, { method: "POST" });
    assert.equal(bare.status, 201);
    const bareJson = await bare.json();
    assert.match(bareJson.id, /^r_/);

    const dup = await gw.api("POST", "/rollouts", { id: "task-1:attempt.0" });
    assert.equal(dup.status, 409);
    assert.equal(dup.json.error.type, "conflict");
    assert.match(dup.json.error.message, /task-1:attempt\.0 already exists/);
    // The duplicate did not replace the original: its token still opens it.
    const models = await call200(gw, created.json, "models");
    assert.equal(models.json.data[0].id, "rollgate-policy");

    const list = await gw.api("GET", "/rollouts");
    assert.equal(list.status, 200);
    const ids = list.json.rollouts.map((r: { id: string }) => r.id).sort();
    assert.deepEqual(ids, [bareJson.id, created.json.id, generated.json.id].sort());
    for (const summary of list.json.rollouts) {
      assert.equal(summary.status, "active");
      assert.deepEqual(summary.turns, { total: 0, done: 0, pending: 0, failed: 0 });
      assert.equal("token" in summary, false, "the list must not leak tokens");
    }

    const got = await getRollout(gw, created.json.id);
    assert.equal(got.id, created.json.id);
    assert.deepEqual(got.metadata, { task: "fix-the-bug", attempt: 0 });
    assert.deepEqual(got.sampling, { temperature: 0.7 });
    assert.equal(got.reward, null);
    assert.deepEqual(got.turn_list, []);
    assert.equal("token" in got, false);
  });
});

/** GET on an agent endpoint of a rollout, asserted 200. */
async function call200(gw: TestGateway, r: RolloutHandle, path: string): Promise<ApiResult> {
  const res = await fetch(`${gw.url}/rollout/${r.id}/v1/${path}`, {
    headers: { authorization: `Bearer ${r.token}` },
  });
  const json = await res.json();
  assert.equal(res.status, 200, JSON.stringify(json));
  return { status: res.status, json, headers: res.headers };
}

Deno.test("rollouts: get lists the turns with prompt and output lengths", async () => {
  await withGateway({}, async (gw) => {
    const r = await gw.rollout();
    const policy = gw.policy(undefined, { rollout: r.id });
    const tools = [{ type: "function", function: READ_FILE_TOOL }];
    const first = await agentCall(gw, r, "chat/completions", chat("Read the README.", { tools }));
    assert.equal(first.status, 200);
    const message = first.json.choices[0].message;
    const call = message.tool_calls[0];
    const second = await agentCall(gw, r, "chat/completions", {
      model: "m",
      tools,
      messages: [
        { role: "user", content: "Read the README." },
        message,
        { role: "tool", tool_call_id: call.id, content: TOOL_RESULT },
      ],
    });
    assert.equal(second.status, 200);
    assert.equal(second.json.choices[0].message.content, FINAL_TEXT);

    const got = await getRollout(gw, r.id);
    assert.deepEqual(got.turns, { total: 2, done: 2, pending: 0, failed: 0 });
    const [t0, t1] = got.turn_list;
    assert.deepEqual([t0.index, t1.index], [0, 1]);
    assert.deepEqual([t0.mount, t1.mount], ["root", "extend"]);
    assert.deepEqual([t0.parent, t1.parent], [null, t0.id]);
    assert.deepEqual([t0.status, t1.status], ["done", "done"]);
    assert.deepEqual([t0.finish_reason, t1.finish_reason], ["stop", "stop"]);
    assert.equal(t0.prompt_length, policy.records[0].prompt_ids.length);
    assert.equal(t1.prompt_length, policy.records[1].prompt_ids.length);
    assert.equal(t0.output_length, policy.records[0].output_ids.length);
    assert.equal(t1.output_length, policy.records[1].output_ids.length);
    assert.equal(t0.rendered_messages, 1);
    assert.equal(t1.rendered_messages, 1);
    assert.ok(t0.timings.received <= t0.timings.completed);
  });
});

Deno.test("rollouts: delete drops pending agent requests with an error", async () => {
  await withGateway({}, async (gw) => {
    const r = await gw.rollout();
    const keep = await gw.rollout();
    const nonStream = agentCall(gw, r, "messages", {
      model: "m",
      max_tokens: 50,
      messages: [{ role: "user", content: "first" }],
    });
    const first = await take(gw, r.id);
    const streamed = fetch(`${gw.url}/rollout/${r.id}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${r.token}`, "content-type": "application/json" },
      body: JSON.stringify(chat("second", { stream: true })),
    });
    // This one stays unclaimed in the queue.
    const second = await gw.api("GET", `/requests/next?wait=5&rollout=${r.id}`);
    assert.equal(second.status, 200);
    const untouched = agentCall(gw, keep, "chat/completions", chat("other rollout"));
    await take(gw, keep.id).then((req) => completeWith(gw, req.request_id, "fine<|im_end|>"));
    assert.equal(await gw.gw.rollouts.pendingRequests(r.id), 2);

    const del = await gw.api("DELETE", `/rollouts/${r.id}`);
    assert.equal(del.status, 200);
    assert.deepEqual(del.json, { id: r.id, deleted: true });

    const a = await nonStream;
    assert.equal(a.status, 409);
    assert.equal(a.json.type, "error");
    assert.match(a.json.error.message, new RegExp(`rollout ${r.id} was deleted`));
    const s = await streamed;
    assert.equal(s.status, 200);
    const { events } = parseSse(await s.text());
    assert.equal(events.at(-1)!.data, "[DONE]");
    assert.match(events.at(-2)!.json.error.message, /was deleted/);

    assert.equal(await gw.gw.rollouts.pendingRequests(), 0);
    const late = await gw.api("POST", `/requests/${first.request_id}/complete`, {
      output_ids: [1],
      finish_reason: "stop",
    });
    // The trainer learns that the request is gone: 410, discard the generation.
    assert.equal(late.status, 410);
    assert.equal(late.json.error.type, "gone");
    assert.match(late.json.error.message, /withdrawn \(rollout .* was deleted\)/);
    assert.equal((await gw.api("GET", `/rollouts/${r.id}`)).status, 404);
    assert.equal((await gw.api("DELETE", `/rollouts/${r.id}`)).status, 404);
    // The other rollout was not touched.
    const other = await untouched;
    assert.equal(other.status, 200);
    assert.equal(other.json.choices[0].message.content, "fine");
    assert.deepEqual((await getRollout(gw, keep.id)).turns, {
      total: 1,
      done: 1,
      pending: 0,
      failed: 0,
    });
  });
});

Deno.test("requests/next: 204 when idle, long poll, rollout filter", async () => {
  await withGateway({}, async (gw) => {
    let t = performance.now();
    const idle = await gw.api("GET", "/requests/next?wait=0");
    assert.equal(idle.status, 204);
    assert.equal(idle.json, null);
    assert.ok(performance.now() - t < 500, `wait=0 took ${performance.now() - t} ms`);
    t = performance.now();
    const short = await gw.api("GET", "/requests/next?wait=0.3");
    assert.equal(short.status, 204);
    assert.ok(performance.now() - t >= 250, `wait=0.3 returned after ${performance.now() - t} ms`);

    const a = await gw.rollout({ id: "a" });
    const b = await gw.rollout({ id: "b" });
    // A long poll that starts before the request arrives gets it.
    const polling = gw.api("GET", "/requests/next?wait=10&rollout=a");
    await new Promise((r) => setTimeout(r, 50));
    const agentA1 = agentCall(gw, a, "chat/completions", chat("a1"));
    const polled = await polling;
    assert.equal(polled.status, 200);
    assert.equal(polled.json.rollout_id, "a");
    assert.match(polled.json.request_id, /^req_/);
    assert.ok(polled.json.turn_id.startsWith("a."));
    assert.deepEqual(
      polled.json.prompt_ids,
      (await gw.gw.model.renderFull([{ role: "user", content: "a1" }], [])).ids,
    );

    // Queue: a2 then b1. The filter picks b1 first; no filter then gives a2.
    const agentA2 = agentCall(gw, a, "chat/completions", chat("a2"));
    await eventuallyPending(gw, 2);
    const agentB1 = agentCall(gw, b, "chat/completions", chat("b1"));
    await eventuallyPending(gw, 3);
    const forB = await gw.api("GET", "/requests/next?wait=0&rollout=b");
    assert.equal(forB.status, 200);
    assert.equal(forB.json.rollout_id, "b");
    assert.equal((await gw.api("GET", "/requests/next?wait=0&rollout=b")).status, 204);
    const any = await gw.api("GET", "/requests/next?wait=0");
    assert.equal(any.json.rollout_id, "a");
    assert.notEqual(any.json.request_id, polled.json.request_id);
    // Everything is claimed now.
    assert.equal((await gw.api("GET", "/requests/next?wait=0")).status, 204);

    await completeWith(gw, polled.json.request_id, "one<|im_end|>");
    await completeWith(gw, any.json.request_id, "two<|im_end|>");
    await completeWith(gw, forB.json.request_id, "bee<|im_end|>");
    const answers = await Promise.all([agentA1, agentA2, agentB1]);
    assert.deepEqual(answers.map((x) => x.json.choices[0].message.content), ["one", "two", "bee"]);
  });
});

async function eventuallyPending(gw: TestGateway, n: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while (await gw.gw.rollouts.pendingRequests() < n) {
    if (Date.now() > deadline) throw new Error(`never ${n} pending requests`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

Deno.test("max_tokens is clamped to the context left after the prompt; an overlong prompt is a 400", async () => {
  const small = await PolicyModel.load({ contextLength: 64 });
  await withGateway({ model: small }, async (gw) => {
    const r = await gw.rollout();
    const prompt = (await small.renderFull([{ role: "user", content: "hi" }], [])).ids;
    assert.ok(prompt.length < 64);
    const room = 64 - prompt.length;
    const cases: [Record<string, unknown>, Record<string, unknown>, number][] = [
      [{}, chat("hi"), room],
      [{}, chat("hi", { max_tokens: 1000 }), room],
      [{}, chat("hi", { max_completion_tokens: 5 }), 5],
      [{ sampling: { max_tokens: 1000 } }, chat("hi"), room],
      [{ sampling: { max_tokens: 7 } }, chat("hi"), 7],
    ];
    for (const [spec, body, want] of cases) {
      // A fresh rollout each time: the same history in one rollout would replay the first turn.
      const rollout = await gw.rollout(spec);
      const agent = agentCall(gw, rollout, "chat/completions", body);
      const req = await take(gw, rollout.id);
      assert.deepEqual(req.prompt_ids, prompt);
      assert.equal(req.sampling.max_tokens, want, JSON.stringify([spec, body]));
      await completeWith(gw, req.request_id, "ok<|im_end|>");
      assert.equal((await agent).status, 200);
    }

    // A prompt at or past the context: 400 in each protocol's shape, no pending request.
    const long = "word ".repeat(80);
    const tooLong = [
      {
        path: "messages",
        body: { model: "m", max_tokens: 10, messages: [{ role: "user", content: long }] },
      },
      { path: "chat/completions", body: chat(long) },
      { path: "responses", body: { model: "m", input: long } },
    ];
    for (const { path, body } of tooLong) {
      for (const stream of [false, true]) {
        const res = await agentCall(gw, r, path, { ...body, stream });
        assert.equal(res.status, 400, JSON.stringify(res.json));
        if (path === "messages") {
          assert.equal(res.json.type, "error");
          assert.equal(res.json.error.type, "invalid_request_error");
        } else {
          assert.equal(res.json.error.type, "invalid_request_error");
        }
        assert.match(res.json.error.message, /prompt is \d+ tokens; the model's context is 64/);
        const n = Number(/prompt is (\d+)/.exec(res.json.error.message)![1]);
        assert.ok(n >= 64);
      }
    }
    assert.equal(await gw.gw.rollouts.pendingRequests(), 0);
    // count_tokens still reports the real length of the overlong prompt.
    const counted = await agentCall(gw, r, "messages/count_tokens", {
      model: "m",
      messages: [{ role: "user", content: long }],
    });
    assert.equal(counted.status, 200);
    assert.equal(
      counted.json.input_tokens,
      (await small.renderFull([{ role: "user", content: long }], [])).ids.length,
    );
  });
});

Deno.test("rollout sampling defaults flow into the pending request; the request overrides them", async () => {
  await withGateway({}, async (gw) => {
    const model = await sharedModel();
    const r = await gw.rollout({ sampling: { max_tokens: 17, temperature: 0.25, top_p: 0.5 } });
    const plain = await gw.rollout();
    const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
      ["chat/completions", chat("defaults"), { max_tokens: 17, temperature: 0.25, top_p: 0.5 }],
      ["chat/completions", chat("override", { temperature: 0.9, max_tokens: 5 }), {
        max_tokens: 5,
        temperature: 0.9,
        top_p: 0.5,
      }],
      ["responses", { model: "m", input: "responses", top_p: 0.8 }, {
        max_tokens: 17,
        temperature: 0.25,
        top_p: 0.8,
      }],
      ["messages", {
        model: "m",
        max_tokens: 3,
        temperature: 0,
        messages: [{ role: "user", content: "anthropic" }],
      }, { max_tokens: 3, temperature: 0, top_p: 0.5 }],
    ];
    for (const [path, body, want] of cases) {
      const agent = agentCall(gw, r, path, body);
      const req = await take(gw, r.id);
      const { stop_token_ids, ...sampling } = req.sampling;
      assert.deepEqual(sampling, want, `${path} ${JSON.stringify(body)}`);
      assert.deepEqual(stop_token_ids, model.stopTokenIds);
      await completeWith(gw, req.request_id, "fine<|im_end|>");
      assert.equal((await agent).status, 200);
    }
    // A rollout without defaults: only the context bound, no temperature or top_p.
    const agent = agentCall(gw, plain, "chat/completions", chat("nothing set"));
    const req = await take(gw, plain.id);
    assert.equal(req.sampling.temperature, undefined);
    assert.equal(req.sampling.top_p, undefined);
    assert.equal(req.sampling.max_tokens, model.contextLength - req.prompt_ids.length);
    await completeWith(gw, req.request_id, "ok<|im_end|>");
    assert.equal((await agent).status, 200);
  });
});

Deno.test("SSE keep-alive comments flow while the trainer has not answered", async () => {
  await withGateway({ keepAliveMs: 100 }, async (gw) => {
    const r = await gw.rollout();
    const streams = [
      {
        path: "messages",
        body: { model: "m", max_tokens: 20, messages: [{ role: "user", content: "slow a" }] },
        last: "message_stop",
      },
      { path: "chat/completions", body: chat("slow b"), last: "[DONE]" },
      { path: "responses", body: { model: "m", input: "slow c" }, last: "response.completed" },
    ];
    for (const { path, body, last } of streams) {
      const res = await fetch(`${gw.url}/rollout/${r.id}/v1/${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${r.token}`, "content-type": "application/json" },
        body: JSON.stringify({ ...body, stream: true }),
      });
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type")!, /^text\/event-stream/);
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let raw = "";
      // Nobody answers: only comments arrive, at least two keep-alives.
      while ((raw.match(/: keep-alive\n\n/g) ?? []).length < 2) {
        const { value, done } = await reader.read();
        assert.ok(!done, "stream ended before the trainer answered");
        raw += value;
      }
      assert.ok(raw.startsWith(": rollgate\n\n"), raw);
      assert.deepEqual(parseSse(raw).events, [], "no event before the answer");
      assert.equal(await gw.gw.rollouts.pendingRequests(r.id), 1);

      const req = await take(gw, r.id);
      await completeWith(gw, req.request_id, "finally<|im_end|>");
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        raw += value;
      }
      const { events, comments } = parseSse(raw);
      assert.ok(comments.filter((c) => c === "keep-alive").length >= 2);
      const final = events.at(-1)!;
      assert.equal(final.event ?? final.data, last);
      const text = events.map((e) => e.json).filter(Boolean).map((j) =>
        j.delta?.text ?? j.choices?.[0]?.delta?.content ??
          (j.type === "response.output_text.delta" ? j.delta : "")
      ).join("");
      assert.equal(text, "finally");
    }
  });
});

Deno.test("finish: samples with the reward; a second finish is 409", async () => {
  await withGateway({}, async (gw) => {
    const r = await gw.rollout({ metadata: { task: "t1" } });
    const policy = gw.policy(undefined, { rollout: r.id });
    const tools = [{ type: "function", function: READ_FILE_TOOL }];
    const first = await agentCall(gw, r, "chat/completions", chat("Read it.", { tools }));
    const message = first.json.choices[0].message;
    const second = await agentCall(gw, r, "chat/completions", {
      model: "m",
      tools,
      messages: [
        { role: "user", content: "Read it." },
        message,
        { role: "tool", tool_call_id: message.tool_calls[0].id, content: TOOL_RESULT },
      ],
    });
    assert.equal(second.status, 200);
    await policy.stop();

    // A request still pending at the finish is dropped with an error.
    const dangling = agentCall(gw, r, "responses", { model: "m", input: "one more?" });
    await eventuallyPending(gw, 1);

    const fin = await gw.api("POST", `/rollouts/${r.id}/finish`, { reward: 0.75 });
    assert.equal(fin.status, 200);
    assert.equal(fin.json.id, r.id);
    assert.equal(fin.json.reward, 0.75);
    const late = await dangling;
    assert.equal(late.status, 409);
    assert.match(late.json.error.message, /was finished/);

    // One chain (turn 0 → turn 1): one sample, token for token what the policy saw and said.
    const samples = fin.json.samples;
    assert.equal(samples.length, 1);
    const [s] = samples;
    const [rec0, rec1] = policy.records;
    assert.equal(s.rollout_id, r.id);
    assert.equal(s.reward, 0.75);
    assert.equal(s.metadata.task, "t1");
    assert.deepEqual(s.input_ids, [...rec1.prompt_ids, ...rec1.output_ids]);
    assert.equal(s.loss_mask.length, s.input_ids.length);
    assert.equal(s.logprobs.length, s.input_ids.length);
    const out0 = rec0.prompt_ids.length;
    const out1 = rec1.prompt_ids.length;
    s.loss_mask.forEach((m: number, i: number) => {
      const sampled = (i >= out0 && i < out0 + rec0.output_ids.length) || i >= out1;
      assert.equal(m, sampled ? 1 : 0, `loss_mask[${i}]`);
      const lp = i >= out1 ? scriptedLogprob(i - out1) : sampled ? scriptedLogprob(i - out0) : 0;
      assert.equal(s.logprobs[i], lp, `logprobs[${i}]`);
    });
    assert.equal(s.num_sampled, rec0.output_ids.length + rec1.output_ids.length);

    const got = await getRollout(gw, r.id);
    assert.equal(got.status, "finished");
    assert.equal(got.reward, 0.75);
    assert.ok(got.finished_at >= got.created_at);
    const again = await gw.api("GET", `/rollouts/${r.id}/samples`);
    assert.equal(again.status, 200);
    assert.deepEqual(again.json.samples, samples);

    const second409 = await gw.api("POST", `/rollouts/${r.id}/finish`, { reward: 1 });
    assert.equal(second409.status, 409);
    assert.equal(second409.json.error.type, "conflict");
    assert.match(second409.json.error.message, /already finished/);
    assert.equal((await getRollout(gw, r.id)).reward, 0.75);

    // Finishing without a body: reward null.
    const other = await gw.rollout();
    const plainFinish = await fetch(`${gw.url}/api/rollouts/${other.id}/finish`, {
      method: "POST",
    });
    assert.equal(plainFinish.status, 200);
    const plainJson = await plainFinish.json();
    assert.equal(plainJson.reward, null);
    assert.deepEqual(plainJson.samples, []);
  });
});
