/**
 * What a replicated gateway cannot keep yet is refused, never dropped: a weight version per
 * appended chunk and `routed_experts` get a 400 saying so and change nothing (the request stays
 * open); a completion's own `weight_version` and `logprobs_mode` are kept in its event and reach
 * the recorded turn. Real PostgreSQL, two real gateway processes.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { postgresMissing, startPostgres } from "../support/postgres_server.ts";
import { skipGroup } from "../support/skips.ts";
import { call, startReplicas } from "./replicas.ts";

const ignore = skipGroup("replicated gateway (PostgreSQL)", postgresMissing());

Deno.test({
  name: "cluster: per-chunk weight versions and routed_experts are refused with a 400, not dropped",
  ignore,
  async fn() {
    const pg = await startPostgres();
    const [a, b] = await startReplicas(2, pg.url);
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      const created = await call(`${a.url}/api/rollouts`, { body: { id: "unkept" } });
      assert.equal(created.status, 201, JSON.stringify(created.json));
      const agent = call(`${a.url}/rollout/unkept/v1/chat/completions`, {
        headers: { authorization: `Bearer ${created.json.token}` },
        body: { model: "m", messages: [{ role: "user", content: "hi" }] },
      });
      const next = await call(`${b.url}/api/requests/next?wait=10&rollout=unkept`);
      assert.equal(next.status, 200, JSON.stringify(next.json));
      const rid = next.json.request_id;

      const append = await call(`${b.url}/api/requests/${rid}/append`, {
        body: { output_ids: [9707], weight_version: 3 },
      });
      assert.equal(append.status, 400, JSON.stringify(append.json));
      assert.match(append.json.error.message, /weight_version per appended chunk/);
      const routed = await call(`${b.url}/api/requests/${rid}/complete`, {
        body: {
          output_ids: [9707, 151645],
          finish_reason: "stop",
          routed_experts: { dtype: "uint8", shape: [1, 1, 1], data: "AA==" },
        },
      });
      assert.equal(routed.status, 400, JSON.stringify(routed.json));
      assert.match(routed.json.error.message, /routed_experts/);
      const [{ n }] = await sql`
        SELECT count(*)::int AS n FROM events WHERE ref = ${rid}`;
      assert.equal(n, 0, "a refused call writes nothing");

      const done = await call(`${b.url}/api/requests/${rid}/complete`, {
        body: {
          output_ids: [9707, 151645],
          finish_reason: "stop",
          weight_version: 7,
          logprobs: [-0.5, -0.1],
          logprobs_mode: "processed",
        },
      });
      assert.equal(done.status, 200, JSON.stringify(done.json));
      const answered = await agent;
      assert.equal(answered.status, 200, JSON.stringify(answered.json));
      assert.equal(answered.json.choices[0].message.content, "Hello");
      const [event] = await sql<{ data: string }[]>`
        SELECT data FROM events WHERE ref = ${rid} AND kind = 'request_completed'`;
      const data = JSON.parse(event.data);
      assert.equal(data.weight_version, 7);
      assert.equal(data.logprobs_mode, "processed");
    } finally {
      await sql.end();
      await a.stop();
      await b.stop();
      await pg.stop();
    }
  },
});
