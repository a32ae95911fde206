/**
 * The PostgreSQL journal against a real server (Debian's, started by the test): the journal
 * contract as the SQLite journal keeps it (events in order with arrays and shared values, samples
 * with cursors), plus what sharing adds: ownership fencing, one cursor for several writers,
 * concurrent schema migration, and writes that survive a server restart.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { type JournalEvent, type Sample, TokenRowsRef } from "../../trajectory/mod.ts";
import { migrate, PgJournal } from "./mod.ts";
import { RolloutFencedError } from "./event_rows.ts";
import { MIGRATIONS, SCHEMA_VERSION } from "./schema.ts";
import {
  postgresMissing,
  type PostgresServer,
  startPostgres,
} from "../../tests/support/postgres_server.ts";
import { skipGroup } from "../../tests/support/skips.ts";

/** An event as a store sees it: any kind, any data (a store never interprets them). */
const event = (
  e: { rollout: string; kind: string; data: object; arrays?: object; shared?: object },
) => e as JournalEvent;
const finished = (rollout: string) =>
  event({ rollout, kind: "rollout_finished", data: { reward: null, finishedAt: 0 } }) as Parameters<
    PgJournal["finish"]
  >[0];

const ignore = skipGroup("PostgreSQL journal", postgresMissing());

const sample = (rollout: string, n: number) =>
  ({
    rollout_id: rollout,
    index: 0,
    input_ids: Int32Array.of(151644, n, 151645),
    loss_mask: [0, 1, 1],
    logprobs: [0, -0.125, -1e-9],
    reward: n,
    metadata: { label_action: "train" },
  }) as unknown as Sample;

async function events(j: PgJournal, rollout: string) {
  const out = [];
  for await (const e of j.events(rollout)) out.push(e);
  return out;
}

async function withServer(fn: (pg: PostgresServer) => Promise<void>) {
  const pg = await startPostgres();
  try {
    await fn(pg);
  } finally {
    await pg.stop();
  }
}

/** A replica's journal with `ids` reserved for it (what the cluster does before a create). */
async function replica(url: string, name: string, ids: string[] = []) {
  const sql = postgres(url, { max: 4, onnotice: () => {} });
  await migrate(sql);
  const j = new PgJournal(sql, { replica: name, retryMs: 20_000 });
  for (const id of ids) {
    await sql`INSERT INTO rollouts (id, status, owner, epoch, lease_until)
      VALUES (${id}, 'reserved', ${name}, 1, now() + interval '1 minute')`;
    j.own(id, 1);
  }
  return j;
}

Deno.test({
  name:
    "pg journal: events in order with arrays and shared values; samples with cursors; forget and expire",
  ignore,
  fn: () =>
    withServer(async (pg) => {
      const j = await replica(pg.url, "r1", ["a", "b"]);
      const tools = [{ name: "read_file", parameters: { type: "object" } }];
      await j.record(event({ rollout: "a", kind: "rollout_created", data: { token: "rg_a" } }));
      await j.record(event({ rollout: "b", kind: "rollout_created", data: { token: "rg_b" } }));
      // Recorded without awaiting each: one group commit, still in call order.
      await Promise.all(Array.from({ length: 50 }, (_, i) =>
        j.record(event({
          rollout: "a",
          kind: "turn_registered",
          data: { index: i },
          arrays: { delta_ids: [i, 151645], logprobs: [-0.5, -1e-300] },
          shared: { tools },
        }))));
      const cursors = await j.finish(finished("b"), [
        sample("b", 1),
        sample("b", 2),
      ]);
      assert.deepEqual(cursors, [1, 2]);
      assert.deepEqual((await j.rollouts()).map((r) => [r.id, r.status]), [
        ["a", "active"],
        ["b", "finished"],
      ]);
      const a = await events(j, "a");
      assert.equal(a.length, 51);
      assert.deepEqual(a.slice(1).map((e) => (e.data as { index: number }).index), [
        ...Array(50).keys(),
      ]);
      assert.deepEqual(a[7].arrays, { delta_ids: [6, 151645], logprobs: [-0.5, -1e-300] });
      assert.deepEqual(a[50].shared, { tools });
      const [{ n }] = await j.sql`SELECT count(*)::int AS n FROM shared`;
      assert.equal(n, 1, "a tool list fifty turns repeat is stored once");

      const logged = await j.after(0, 10);
      assert.deepEqual(logged.map((l) => l.cursor), [1, 2]);
      assert.deepEqual(logged[1].sample, { ...sample("b", 2), input_ids: [151644, 2, 151645] });
      assert.equal(await j.oldest(), 1);
      assert.equal(await j.newest(), 2);
      assert.deepEqual(await j.append([sample("c", 3)]), [3]);
      assert.equal(await j.newest(), 3);

      await j.expire("a");
      await j.forget("b");
      assert.deepEqual(await events(j, "b"), []);
      const [row] = await j.sql`SELECT status, owner FROM rollouts WHERE id = 'a'`;
      assert.deepEqual({ ...row }, { status: "expired", owner: null });
      assert.equal((await j.after(0, 10)).length, 3, "samples already logged stay after a delete");
      await j.sql.end();
    }),
});

Deno.test({
  name:
    "pg journal: a write after another replica claimed the rollout is refused, in the statement that writes",
  ignore,
  fn: () =>
    withServer(async (pg) => {
      const old = await replica(pg.url, "old", ["r"]);
      const other = await replica(pg.url, "new");
      await old.record(event({ rollout: "r", kind: "rollout_created", data: {} }));
      await old.record(event({ rollout: "r", kind: "turn_failed", data: { index: 0 } }));
      // The takeover: one conditional update raising the epoch.
      const [claimed] = await other.sql`
        UPDATE rollouts SET owner = 'new', epoch = epoch + 1 WHERE id = 'r' AND epoch = 1
        RETURNING epoch`;
      other.own("r", Number(claimed.epoch));
      await assert.rejects(
        old.record(event({ rollout: "r", kind: "turn_failed", data: { index: 1 } })),
        RolloutFencedError,
      );
      await assert.rejects(
        old.finish(finished("r"), [sample("r", 1)]),
        RolloutFencedError,
      );
      await other.record(event({ rollout: "r", kind: "turn_failed", data: { index: 2 } }));
      const rows = await other.sql<{ replica: string; epoch: string; kind: string }[]>`
        SELECT replica, epoch, kind FROM events WHERE rollout = 'r' ORDER BY seq`;
      assert.deepEqual(rows.map((r) => [r.replica, Number(r.epoch)]), [
        ["old", 1],
        ["old", 1],
        ["new", 2],
      ]);
      assert.deepEqual(await old.after(0, 10), [], "the refused finish logged no sample");
      await old.sql.end();
      await other.sql.end();
    }),
});

Deno.test({
  name:
    "pg journal: replicas finishing at once get one gateway-wide cursor sequence, no gaps, in commit order",
  ignore,
  fn: () =>
    withServer(async (pg) => {
      const ids = Array.from({ length: 30 }, (_, i) => `r${i}`);
      const a = await replica(pg.url, "a", ids.filter((_, i) => i % 2 === 0));
      const b = await replica(pg.url, "b", ids.filter((_, i) => i % 2 === 1));
      const own = (id: string) => Number(id.slice(1)) % 2 === 0 ? a : b;
      for (const id of ids) {
        await own(id).record(event({ rollout: id, kind: "rollout_created", data: {} }));
      }
      // A reader polling while they write never sees a cursor before a smaller one commits.
      let seen = 0;
      let reading = true;
      const gaps: string[] = [];
      const reader = (async () => {
        while (reading) {
          for (const l of await a.after(seen, 100)) {
            if (l.cursor !== seen + 1) gaps.push(`${seen} → ${l.cursor}`);
            seen = l.cursor;
          }
        }
      })();
      const cursors = (await Promise.all(
        ids.map((id) =>
          own(id).finish(finished(id), [
            sample(id, 1),
            sample(id, 2),
          ])
        ),
      )).flat();
      reading = false;
      await reader;
      assert.deepEqual(cursors.toSorted((x, y) => x - y), [...Array(60).keys()].map((k) => k + 1));
      assert.deepEqual(gaps, []);
      await a.sql.end();
      await b.sql.end();
    }),
});

Deno.test({
  name: "pg journal: replicas migrating one new database at once make the schema once",
  ignore,
  fn: () =>
    withServer(async (pg) => {
      const conns = Array.from(
        { length: 4 },
        () => postgres(pg.url, { max: 1, onnotice: () => {} }),
      );
      assert.deepEqual(
        await Promise.all(conns.map(migrate)),
        Array(4).fill(SCHEMA_VERSION),
      );
      for (const c of conns) await c.end();
    }),
});

Deno.test({
  name:
    "pg journal: events recorded while the server restarts are written once it is back, each once",
  ignore,
  fn: () =>
    withServer(async (pg) => {
      const j = await replica(pg.url, "r1", ["a"]);
      await j.record(event({ rollout: "a", kind: "rollout_created", data: {} }));
      await pg.stopServer();
      const writes = Array.from({ length: 20 }, (_, i) =>
        j.record(event({ rollout: "a", kind: "turn_failed", data: { index: i } })));
      await new Promise((r) =>
        setTimeout(r, 500)
      );
      await pg.startServer();
      await Promise.all(writes);
      const got = await events(j, "a");
      assert.deepEqual(got.slice(1).map((e) => (e.data as { index: number }).index), [
        ...Array(20).keys(),
      ]);
      await j.sql.end();
    }),
});

Deno.test({
  name:
    "pg journal: token rows written under the owner's epoch, read by another replica (held past its memory bound), kept for logged samples; schema 1 migrates",
  ignore,
  fn: () =>
    withServer(async (pg) => {
      // A database at schema 1 (no token rows yet), with an open request, migrates.
      const old = postgres(pg.url, { max: 1, onnotice: () => {} });
      await old.begin(async (tx) => {
        await tx`CREATE TABLE rollgate_schema (version integer NOT NULL)`;
        await tx`INSERT INTO rollgate_schema VALUES (1)`;
        await tx.unsafe(MIGRATIONS[0]);
      });
      await old`INSERT INTO pending (request_id, rollout, turn_id, state, lease_ms, max_tokens)
        VALUES ('q1', 'a', 'a.0.x', 'queued', 1000, 10)`;
      assert.equal(await migrate(old), SCHEMA_VERSION);
      assert.deepEqual(
        [...await old`SELECT prompt_len, rows_from, versions, routed_experts FROM pending`],
        [{ prompt_len: null, rows_from: 0, versions: [], routed_experts: null }],
      );
      await old.end();

      const a = await replica(pg.url, "r1", ["a"]);
      const b = new PgJournal(postgres(pg.url, { max: 2, onnotice: () => {} }), {
        replica: "r2",
        rowCacheBytes: 4,
      });
      const rows = (n: number, v: number) => ({
        dtype: "uint8" as const,
        shape: [n, 1, 1],
        bytes: Uint8Array.from({ length: n }, (_, i) => v + i),
      });
      const read = (j: PgJournal, turn: string) => {
        const got = j.readRows(turn, "routed_experts");
        return got && [...got];
      };
      await a.putRows("a", "a.0.x", "routed_experts", rows(3, 10));
      await a.putRows("a", "a.1.x", "routed_experts", rows(2, 20));
      assert.deepEqual(read(a, "a.0.x"), [10, 11, 12]);
      // Another replica holds none until it loads them; held past its 4-byte bound until released.
      assert.equal(read(b, "a.0.x"), null);
      const release = await b.loadRows(["a.0.x", "a.1.x", "a.9.x"], "routed_experts");
      assert.deepEqual(read(b, "a.0.x"), [10, 11, 12]);
      assert.deepEqual(read(b, "a.1.x"), [20, 21]);
      assert.equal(read(b, "a.9.x"), null);
      release();
      assert.equal(read(b, "a.0.x"), null, "dropped once released, over the bound");

      // Taken over: the old owner writes no rows any more.
      await a.sql`UPDATE rollouts SET owner = 'r2', epoch = 2 WHERE id = 'a'`;
      b.own("a", 2);
      await assert.rejects(
        a.putRows("a", "a.2.x", "routed_experts", rows(1, 0)),
        RolloutFencedError,
      );
      assert.equal((await a.sql`SELECT 1 FROM token_rows WHERE turn = 'a.2.x'`).length, 0);

      // A logged sample keeps its rows' plan; read back, they come from the table, whoever asks,
      // and a deleted rollout's rows stay while its samples are logged.
      const plan = {
        field: "routed_experts" as const,
        dtype: "uint8" as const,
        shape: [5, 1, 1],
        segments: [{ turn: "a.0.x", from: 0, rows: 3 }, { turn: "a.1.x", from: 3, rows: 2 }],
      };
      const withRows = { ...sample("a", 1), routed_experts: new TokenRowsRef(b, plan) };
      await b.append([withRows as unknown as Sample]);
      await b.forget("a");
      const [logged] = await a.after(0, 10);
      const wire = (logged.sample.routed_experts as TokenRowsRef).toJSON();
      assert.deepEqual(wire, {
        dtype: "uint8",
        shape: [5, 1, 1],
        data: btoa(String.fromCharCode(10, 11, 12, 20, 21)),
      });
      await a.sql.end();
      await b.sql.end();
    }),
});

Deno.test({
  name: "pg journal: images by hash, written once whichever replica sees them, read by any",
  ignore,
  fn: () =>
    withServer(async (pg) => {
      const [a, b] = [await replica(pg.url, "r1"), await replica(pg.url, "r2")];
      const bytes = Uint8Array.from({ length: 300_000 }, (_, i) => (i * 7919) % 251);
      const hash = "ab".repeat(32);
      // Both replicas at once, and again: one row.
      await Promise.all([
        a.putImage(hash, bytes),
        b.putImage(hash, bytes),
        a.putImage(hash, bytes),
      ]);
      const [{ n }] = await a.sql`SELECT count(*)::int AS n FROM images`;
      assert.equal(n, 1);
      assert.deepEqual(await b.readImage(hash), bytes, "another replica reads the bytes");
      assert.equal(await a.readImage("cd".repeat(32)), null);
      await a.sql.end();
      await b.sql.end();
    }),
});
