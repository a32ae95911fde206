/**
 * The pending requests' statements against a real PostgreSQL (Debian's, started by the test): the
 * open states are declared once (the released migration's partial index spells the same list), the
 * table is vacuumed by a count of dead rows, a
 * completion is accepted once and the same one sent again is `resent`, the stored answer is a
 * typed request event whose checksum catches a changed byte, and what a gone replica handed out
 * unacknowledged is offered again at once.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { GateError } from "../../generation/mod.ts";
import { migrate } from "./schema.ts";
import { RequestRows } from "./request_rows.ts";
import { ClaimRows } from "./claim_rows.ts";
import { OPEN_STATES } from "./request_states.ts";
import { completionOf } from "./request_events.ts";
import { postgresMissing, startPostgres } from "../../tests/support/postgres_server.ts";
import { skipGroup } from "../../tests/support/skips.ts";

const ignore = skipGroup("PostgreSQL journal", postgresMissing());

Deno.test({
  name:
    "request rows: open states declared once; a completion lands once, sent again it is resent; its checksum holds; a gone replica's deliveries come back",
  ignore,
  async fn() {
    const pg = await startPostgres();
    const sql = postgres(pg.url, { max: 2, onnotice: () => {} });
    try {
      await migrate(sql);
      const [{ indexdef }] = await sql`
        SELECT indexdef FROM pg_indexes WHERE indexname = 'pending_open'`;
      const listed = [...indexdef.matchAll(/'(\w+)'::text/g)].map((m) => m[1]);
      assert.deepEqual(listed, [...OPEN_STATES], indexdef);
      // A claim walks the index's dead entries: vacuumed by a count of them, not a share.
      const [{ reloptions }] = await sql`SELECT reloptions FROM pg_class WHERE relname = 'pending'`;
      assert.deepEqual(reloptions, [
        "autovacuum_vacuum_scale_factor=0",
        "autovacuum_vacuum_threshold=1000",
      ]);

      await sql`INSERT INTO rollouts (id, status, owner, epoch, lease_until)
        VALUES ('r1', 'active', 'owner', 1, now() + interval '1 minute')`;
      const a = new RequestRows(sql, "a", 10_000, 60_000);
      const b = new RequestRows(sql, "b", 10_000, 60_000);
      // The long polls' claims on replicas a and b.
      const [claimA, claimB] = ["a", "b"].map((r) => new ClaimRows(sql, r, 10_000));
      const queue = (rid: string) =>
        a.insert({
          request_id: rid,
          rollout_id: "r1",
          turn_id: `r1.${rid}`,
          maxTokens: 16,
          rows: { promptLength: 4, from: 0 },
        });
      assert.deepEqual(await queue("q1"), { inserted: true });
      assert.deepEqual(
        await queue("q1"),
        { inserted: false },
        "a restored turn's request is there already",
      );

      const done = {
        output_ids: [9707, 151645],
        logprobs: [-0.5, -0.25],
        finish_reason: "stop" as const,
      };
      assert.deepEqual(await a.complete("q1", done), { appended: 0, versions: [] });
      // Its answer was lost with replica a: the trainer sends it again through replica b.
      assert.equal(await b.complete("q1", done), "resent");
      await assert.rejects(
        b.complete("q1", { ...done, output_ids: [13048, 151645] }),
        (e) => e instanceof GateError && e.kind === "already_resolved",
      );
      const [{ n }] = await sql`
        SELECT count(*)::int AS n FROM events WHERE ref = 'q1' AND kind = 'request_completed'`;
      assert.equal(n, 1, "one completion event, whoever sent it how often");
      const outcome = await b.outcome("q1");
      assert.equal(outcome?.event?.kind, "request_completed");
      if (outcome?.event?.kind === "request_completed") {
        assert.deepEqual(completionOf(outcome.event), done);
      }

      // A byte of the stored answer changed: the row fails its checksum instead of being read.
      await sql`UPDATE events SET data = replace(data, 'stop', 'stoq') WHERE ref = 'q1'`;
      await assert.rejects(b.outcome("q1"), /checksum/);

      // Replica b handed q2 to a trainer and died before the trainer got it.
      await queue("q2");
      assert.deepEqual((await claimB.claim(undefined, 60_000)).map((c) => c.request_id), ["q2"]);
      assert.deepEqual(await claimB.claim(undefined, 60_000), [], "delivered: not offered again");
      assert.equal(await a.redeliverFrom("b"), 1);
      await queue("q3");
      assert.deepEqual(
        (await claimA.claim(undefined, 60_000, 5)).map((c) => c.request_id),
        ["q2", "q3"],
        "offered again at once, ahead of the queue, several claimed at once",
      );

      // Claimed leased (`next` with `ack=1`): leased in the claim's statement, for its lease.
      await queue("q4");
      const [leased] = await claimB.claim(undefined, 1_500, 1, true);
      assert.equal(leased.request_id, "q4");
      assert.ok(Math.abs(leased.expires! - (Date.now() + 1_500)) < 1_000, "expires as granted");
      const [row] = await sql`SELECT state, lease_ms FROM pending WHERE request_id = 'q4'`;
      assert.deepEqual({ ...row }, { state: "leased", lease_ms: 1_500 });
      assert.equal(await a.redeliverFrom("b"), 0, "leased: not offered again with its replica");
      assert.deepEqual(await claimA.claim(undefined, 60_000), [], "its lease holds it");
      // Its answer was lost: offered again once the lease lapses (not at the ack timeout).
      await new Promise((r) => setTimeout(r, 1_600));
      assert.deepEqual((await claimA.claim(undefined, 60_000)).map((c) => c.request_id), ["q4"]);
      // Inserted leased for this replica's own waiting poll: one statement, its lease returned.
      const taken = await a.insert({
        request_id: "q5",
        rollout_id: "r1",
        turn_id: "r1.q5",
        maxTokens: 16,
        rows: { promptLength: 4, from: 0 },
      }, { leaseMs: 30_000, leased: true });
      assert.ok(taken.inserted && Math.abs(taken.expires! - (Date.now() + 30_000)) < 1_000);
      assert.deepEqual(
        { ...(await sql`SELECT state FROM pending WHERE request_id = 'q5'`)[0] },
        { state: "leased" },
      );
      // Its poll ended before it was handed over: released (offered again in a second), but only
      // by the replica that claimed it.
      const left = async () =>
        Number(
          (await sql`SELECT extract(epoch FROM deadline - now()) AS s FROM pending
          WHERE request_id = 'q5'`)[0].s,
        );
      await claimB.release("q5");
      assert.ok(await left() > 20, "another replica's release changes nothing");
      await claimA.release("q5");
      assert.ok(await left() <= 1, "released: offered again within a second");
    } finally {
      await sql.end({ timeout: 2 });
      await pg.stop();
    }
  },
});
