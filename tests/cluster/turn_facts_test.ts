/**
 * What replicas keep of a turn's later facts: real PostgreSQL and two `main.ts serve
 * --database-url` replicas. Rewards per turn posted to the replica that does not own the rollout
 * (forwarded to its owner) before and after finish are kept; the owner is killed (SIGKILL), the
 * other replica takes the rollout over from the database, and its samples carry both rewards; a
 * repeat changes nothing, another value is refused. A weight version named on `ack` or `resume`,
 * which replicas do not keep, is refused with a 400 that says where to name it, never dropped.
 * A trainer's kept sets completed on the replica that does not own the rollout reach the owner's
 * samples, the shared sample stream and the samples after the takeover.
 */
import assert from "node:assert/strict";
import { postgresMissing, startPostgres } from "../support/postgres_server.ts";
import { skipGroup } from "../support/skips.ts";
import { call, sleep, startReplicas } from "./replicas.ts";

const HELLO = [9707, 151645]; // "Hello<|im_end|>"
/** The kept sets a sampler reports for HELLO: each holds the id sampled there. */
const KEPT = [[9707, 9708, 40], [151645]];

/** Each turn's kept sets at its sampled ids, nothing elsewhere. */
// deno-lint-ignore no-explicit-any
function checkKept(sample: any) {
  const { offsets, ids } = sample.sampling_mask;
  const sets = offsets.slice(0, -1).map((a: number, i: number) => ids.slice(a, offsets[i + 1]));
  const want = sample.input_ids.map(() => []);
  for (const span of sample.turn_spans) KEPT.forEach((k, i) => want[span.output_start + i] = k);
  assert.deepEqual(sets, want);
}

const ignore = skipGroup("replicated gateway (PostgreSQL)", postgresMissing());

Deno.test({
  name: "cluster: turn rewards posted through another replica survive the owner's death",
  ignore,
  async fn() {
    const pg = await startPostgres();
    const [a, b] = await startReplicas(2, pg.url);
    try {
      const created = await call(`${a.url}/api/rollouts`, { body: { id: "steps" } });
      assert.equal(created.status, 201, JSON.stringify(created.json));
      const headers = { authorization: `Bearer ${created.json.token}` };
      const messages: { role: string; content: string }[] = [];
      for (const say of ["one", "two"]) {
        messages.push({ role: "user", content: say });
        const answer = call(`${a.url}/rollout/steps/v1/chat/completions`, {
          headers,
          body: { model: "m", messages },
        });
        const next = await call(`${b.url}/api/requests/next?wait=10&rollout=steps`);
        assert.equal(next.status, 200, JSON.stringify(next.json));
        const acked = await call(`${b.url}/api/requests/${next.json.request_id}/ack`, {
          body: { weight_version: 3 },
        });
        assert.equal(acked.status, 400, JSON.stringify(acked.json));
        assert.match(acked.json.error.message, /append the first ids with their weight_version/);
        const done = await call(`${b.url}/api/requests/${next.json.request_id}/complete`, {
          body: {
            output_ids: HELLO,
            logprobs: [-0.5, -0.25],
            finish_reason: "stop",
            sampling_mask: KEPT,
          },
        });
        assert.equal(done.status, 200, JSON.stringify(done.json));
        const answered = await answer;
        assert.equal(answered.status, 200, JSON.stringify(answered.json));
        messages.push({ role: "assistant", content: answered.json.choices[0].message.content });
      }
      // A pause still reaches every replica; a resume naming a version is refused and resumes nothing.
      assert.equal((await call(`${b.url}/api/pause`, { body: {} })).status, 200);
      const resumed = await call(`${b.url}/api/resume`, { body: { weight_version: 3 } });
      assert.equal(resumed.status, 400, JSON.stringify(resumed.json));
      for (let tries = 0; (await call(`${a.url}/api/status`)).json.paused !== true; tries++) {
        assert.ok(tries < 50, "the pause reached the other replica");
        await sleep(100);
      }
      assert.equal((await call(`${a.url}/api/resume`, { body: {} })).status, 200);
      for (let tries = 0; (await call(`${b.url}/api/status`)).json.paused !== false; tries++) {
        assert.ok(tries < 50, "the resume reached the other replica");
        await sleep(100);
      }
      const reward = (url: string, turn: number, value: number) =>
        call(`${url}/api/rollouts/steps/turns/${turn}/reward`, { body: { reward: value } });
      assert.equal((await reward(b.url, 0, 0.5)).status, 200);
      const fin = await call(`${b.url}/api/rollouts/steps/finish`, { body: { reward: 1 } });
      assert.equal(fin.status, 200, JSON.stringify(fin.json));
      assert.deepEqual(fin.json.samples[0].turn_rewards, [0.5, null]);
      checkKept(fin.json.samples[0]);
      const stream = await fetch(`${b.url}/api/samples/stream?after=0`);
      const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
      let line = "";
      while (!line.includes("\n")) line += (await reader.read()).value ?? "";
      await reader.cancel();
      checkKept(JSON.parse(line.split("\n")[0]));
      assert.equal((await reward(b.url, 1, -1)).status, 200);

      await a.kill("SIGKILL");
      let sample;
      for (const deadline = Date.now() + 20_000; !sample;) {
        const r = await call(`${b.url}/api/rollouts/steps/samples`);
        if (r.status === 200) sample = r.json.samples[0];
        else if (Date.now() > deadline) assert.fail(`no takeover: ${JSON.stringify(r.json)}`);
        else await sleep(200);
      }
      assert.deepEqual(sample.turn_rewards, [0.5, -1]);
      checkKept(sample);
      assert.equal(sample.position_rewards[sample.turn_spans[1].end - 1], -1);
      const repeat = await reward(b.url, 1, -1);
      assert.deepEqual([repeat.status, repeat.json.recorded], [200, false]);
      assert.equal((await reward(b.url, 0, 3)).status, 409);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      await pg.stop();
    }
  },
});
