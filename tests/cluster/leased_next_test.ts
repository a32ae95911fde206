/**
 * `GET /api/requests/next?ack=1` on replicas: a request is claimed already leased in the claim's
 * statement (or inserted leased for a poll waiting on its owner), so a trainer's turn is `next` +
 * `complete` on any replica. A lost answer costs the lease, not the ack timeout; every request of
 * a batch is leased; a withdrawn one answers `renew` with 410; each completion lands once. Real
 * PostgreSQL, two real gateway processes.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { postgresMissing, startPostgres } from "../support/postgres_server.ts";
import { skipGroup } from "../support/skips.ts";
import { call, sleep, startReplicas } from "./replicas.ts";

const ignore = skipGroup("replicated gateway (PostgreSQL)", postgresMissing());
const DONE = { output_ids: [9707, 151645], finish_reason: "stop" };

Deno.test({
  name:
    "cluster: next?ack=1 claims leased: no ack, a lost answer waits out its lease, a batch all leased",
  ignore,
  async fn() {
    const pg = await startPostgres();
    const [a, b] = await startReplicas(2, pg.url, ["--ack-timeout", "0.5"]);
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    const state = async (rid: string) =>
      (await sql`SELECT state FROM pending WHERE request_id = ${rid}`)[0]?.state;
    try {
      const created = await call(`${a.url}/api/rollouts`, { body: { id: "lease1" } });
      assert.equal(created.status, 201, JSON.stringify(created.json));
      const agent = (content: string) =>
        call(`${a.url}/rollout/lease1/v1/chat/completions`, {
          headers: { authorization: `Bearer ${created.json.token}` },
          body: { model: "m", messages: [{ role: "user", content }] },
        });

      // A poll waiting on the owner takes the request as it is queued: inserted leased.
      const waiting = call(`${a.url}/api/requests/next?wait=10&ack=1&lease=30`);
      await sleep(300);
      const first = agent("one");
      const taken = await waiting;
      assert.equal(taken.status, 200, JSON.stringify(taken.json));
      assert.equal(taken.json.lease_s, 30);
      assert.ok(taken.json.expires_at > Date.now() + 25_000);
      assert.equal(await state(taken.json.request_id), "leased");
      await sleep(1_000); // past the ack timeout: still this trainer's
      assert.equal((await call(`${b.url}/api/requests/next?wait=0`)).status, 204);
      const done = await call(`${b.url}/api/requests/${taken.json.request_id}/complete`, {
        body: DONE,
      });
      assert.equal(done.status, 200, JSON.stringify(done.json));
      assert.equal((await first).status, 200);

      // Claimed leased on the other replica; the answer is lost: offered again at the lease's end.
      const second = agent("two");
      const lost = await call(`${b.url}/api/requests/next?wait=10&ack=1&lease=2`);
      assert.equal(lost.status, 200, JSON.stringify(lost.json));
      assert.equal(lost.json.lease_s, 2);
      assert.equal(await state(lost.json.request_id), "leased");
      await sleep(1_000);
      assert.equal(
        (await call(`${a.url}/api/requests/next?wait=0`)).status,
        204,
        "twice the ack timeout: still under its lease",
      );
      const again = await call(`${a.url}/api/requests/next?wait=10&ack=1`);
      assert.equal(again.json.request_id, lost.json.request_id, "offered again after the lease");
      assert.ok(Date.now() >= lost.json.expires_at - 100, "not before the lease ran out");
      assert.equal(again.json.lease_s, 60, "the default lease");
      const completed = await call(`${a.url}/api/requests/${again.json.request_id}/complete`, {
        body: DONE,
      });
      assert.equal(completed.status, 200);
      assert.equal((await second).status, 200);
      const late = await call(`${b.url}/api/requests/${lost.json.request_id}/complete`, {
        body: { ...DONE, output_ids: [13048, 151645] },
      });
      assert.equal(late.status, 409, "the first holder's late completion is refused");

      // A batch: every request it hands out is leased.
      const agents = ["x", "y", "z"].map(agent);
      await sleep(500);
      const batch = await call(`${b.url}/api/requests/next?wait=5&max=8&ack=1&lease=20`);
      assert.equal(batch.status, 200, JSON.stringify(batch.json));
      const rids: string[] = batch.json.requests.map((r: { request_id: string }) => r.request_id);
      assert.equal(rids.length, 3);
      for (const r of batch.json.requests) assert.equal(r.lease_s, 20);
      for (const rid of rids) assert.equal(await state(rid), "leased");
      for (const rid of rids) {
        const c = await call(`${a.url}/api/requests/${rid}/complete`, { body: DONE });
        assert.equal(c.status, 200);
      }
      for (const x of agents) assert.equal((await x).status, 200);

      const [{ n }] = await sql`
        SELECT count(*)::int AS n FROM events WHERE rollout = 'lease1' AND kind = 'request_completed'`;
      assert.equal(n, 5, "one completion per request");

      // Replicas keep no version per ack: refused on next as on ack.
      const versioned = await call(`${b.url}/api/requests/next?wait=0&ack=1&weight_version=3`);
      assert.equal(versioned.status, 400);
      assert.match(versioned.json.error.message, /no weight version per ack/);

      // Withdrawn (its rollout finished) while leased: the renewal says 410.
      const last = agent("last");
      const held = await call(`${b.url}/api/requests/next?wait=10&ack=1`);
      assert.equal(held.status, 200);
      const fin = await call(`${a.url}/api/rollouts/lease1/finish`, { body: { reward: 1 } });
      assert.equal(fin.status, 200, JSON.stringify(fin.json));
      const renew = await call(`${b.url}/api/requests/${held.json.request_id}/renew`, { body: {} });
      assert.equal(renew.status, 410, JSON.stringify(renew.json));
      assert.notEqual((await last).status, 200);
    } finally {
      await sql.end({ timeout: 2 });
      await Promise.all([a.stop(), b.stop()]);
      await pg.stop();
    }
  },
});
