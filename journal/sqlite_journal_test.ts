/** The SQLite journal: events in order with their arrays and shared values, samples with cursors, reopening, one gateway per directory. */
import assert from "node:assert/strict";
import type { JournalEvent, Sample } from "../trajectory/mod.ts";
import { JournalLockedError, SqliteJournal } from "./mod.ts";
import { packArrays, unpackArrays } from "./array_codec.ts";
import { DatabaseSync } from "node:sqlite";

/** An event as a store sees it: the store keeps `data` as given and never reads it. */
const event = (
  e: { rollout: string; kind: string; data: object; arrays?: object; shared?: object },
) => e as JournalEvent;

async function events(j: SqliteJournal, rollout: string) {
  const out = [];
  for await (const e of j.events(rollout)) out.push(e);
  return out;
}

const sample = (rollout: string, n: number) =>
  ({
    rollout_id: rollout,
    index: 0,
    input_ids: [151644, n, 151645],
    loss_mask: [0, 1, 1],
    logprobs: [0, -0.125, -1e-9],
    reward: n,
    metadata: { label_action: "train" },
  }) as unknown as Sample;

Deno.test("array codec: ids, masks and logprobs round-trip exactly in their narrowest type", () => {
  const arrays = {
    mask: [0, 1, 1, 0],
    ids: [151644, 0, 2147483647, -5],
    logprobs: [-0.1, -1e-300, 0, -Infinity, 3.5],
    empty: [],
  };
  const blob = packArrays(arrays);
  assert.deepEqual(unpackArrays(blob), arrays);
  assert.equal(
    packArrays({ ids: [1, 2, 151645] }).length,
    4 + 2 + 3 + 5 + 12,
    "int32: 4 bytes an id",
  );
  assert.equal(packArrays({ m: [0, 1] }).length, 4 + 2 + 1 + 5 + 2, "uint8: 1 byte a mask entry");
});

Deno.test("journal: events come back in order, per rollout, with arrays and shared values; reopening keeps everything", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-journal-" });
  try {
    const tools = [{ name: "read_file", parameters: { type: "object" } }];
    let j = new SqliteJournal(dir);
    await j.record(event({ rollout: "a", kind: "rollout_created", data: { token: "rg_a" } }));
    await j.record(event({ rollout: "b", kind: "rollout_created", data: { token: "rg_b" } }));
    for (let i = 0; i < 3; i++) {
      await j.record(event({
        rollout: "a",
        kind: "turn_registered",
        data: { index: i },
        arrays: { delta_ids: [i, 151645] },
        shared: { tools },
      }));
    }
    await j.finish({ rollout: "b", kind: "rollout_finished", data: { reward: 1, finishedAt: 0 } }, [
      sample("b", 1),
      sample("b", 2),
    ]);
    j.close();

    j = new SqliteJournal(dir);
    assert.deepEqual((await j.rollouts()).map((r) => [r.id, r.status]), [
      ["a", "active"],
      ["b", "finished"],
    ]);
    const a = await events(j, "a");
    assert.deepEqual(a.map((e) => e.kind), [
      "rollout_created",
      "turn_registered",
      "turn_registered",
      "turn_registered",
    ]);
    assert.deepEqual(a[2].data, { index: 1 });
    assert.deepEqual(a[2].arrays, { delta_ids: [1, 151645] });
    assert.deepEqual(a[3].shared, { tools });
    const stored = j.path;
    const sharedRows = new (await import("node:sqlite")).DatabaseSync(stored, { readOnly: true });
    j.close(); // the reader below must not meet the exclusive lock
    assert.equal(
      (sharedRows.prepare("SELECT COUNT(*) AS n FROM shared").get() as { n: number }).n,
      1,
      "a tool list three turns repeat is stored once",
    );
    sharedRows.close();

    j = new SqliteJournal(dir);
    const logged = await j.after(0, 10);
    assert.deepEqual(logged.map((l) => l.cursor), [1, 2]);
    assert.deepEqual(logged[1].sample, sample("b", 2), "a sample round-trips, key order too");
    assert.deepEqual(Object.keys(logged[1].sample), Object.keys(sample("b", 2)));
    assert.equal(await j.oldest(), 1);
    assert.deepEqual(await j.append([sample("c", 3)]), [3]);

    await j.expire("a");
    await j.forget("b");
    assert.deepEqual((await j.rollouts()).map((r) => [r.id, r.status]), [["a", "expired"]]);
    assert.deepEqual(await events(j, "b"), []);
    assert.equal((await j.after(0, 10)).length, 3, "samples already logged stay after a delete");
    j.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("journal: a second gateway on the same data directory is refused", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-journal-" });
  const first = new SqliteJournal(dir);
  try {
    await first.record(event({ rollout: "a", kind: "rollout_created", data: {} }));
    assert.throws(() => new SqliteJournal(dir), JournalLockedError);
  } finally {
    first.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("journal: the cursor of an empty sample log continues after the last one", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-journal-" });
  const j = new SqliteJournal(dir);
  try {
    assert.equal(await j.oldest(), 1);
    await j.append([sample("a", 1), sample("a", 2)]);
    assert.equal(await j.oldest(), 1);
  } finally {
    j.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("journal: a damaged sample row is skipped loudly and counted once; the stream moves past it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    let j = new SqliteJournal(dir);
    await j.append([1, 2, 3, 4, 5].map((n) => sample("r", n)));
    j.close();
    const db = new DatabaseSync(`${dir}/journal.sqlite`);
    db.exec("UPDATE samples SET data = '{damaged' WHERE cursor IN (2, 3)");
    db.exec("UPDATE samples SET arrays = x'0102' WHERE cursor = 5");
    db.close();
    j = new SqliteJournal(dir);
    const said: string[] = [];
    const error = console.error;
    console.error = (m: string) => said.push(m);
    try {
      assert.deepEqual((await j.after(0, 10)).map((e) => e.cursor), [1, 4]);
      // A page of nothing but damaged rows is passed over, not returned empty.
      assert.deepEqual((await j.after(1, 2)).map((e) => e.cursor), [4]);
      assert.deepEqual((await j.after(4, 10)).map((e) => e.cursor), []);
    } finally {
      console.error = error;
    }
    assert.equal(j.damagedSamples, 3);
    assert.equal(said.length, 3, "each damaged row is reported once");
    assert.match(said[0], /sample 2 \(rollout r\) is damaged and skipped/);
    assert.equal(await j.newest(), 5);
    j.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("journal: a flipped byte in a stored sample that still decodes fails its checksum and is skipped, not trained on", async () => {
  const dir = await Deno.makeTempDir();
  try {
    let j = new SqliteJournal(dir);
    await j.append([1, 2, 3].map((n) => sample("r", n)));
    j.close();
    const db = new DatabaseSync(`${dir}/journal.sqlite`);
    // Still JSON, still a sample: a reward of 7 where 2 was written, a loss bit flipped.
    db.exec(`UPDATE samples SET data = replace(data, '"reward":2', '"reward":7') WHERE cursor = 2`);
    const [{ arrays }] = db.prepare("SELECT arrays FROM samples WHERE cursor = 3").all() as {
      arrays: Uint8Array;
    }[];
    const flipped = new Uint8Array(arrays);
    flipped[flipped.length - 1] ^= 1;
    db.prepare("UPDATE samples SET arrays = ? WHERE cursor = 3").run(flipped);
    // A journal from before the checksum: its rows have none and are read as they are.
    db.exec("UPDATE samples SET sum = NULL WHERE cursor = 1");
    db.close();
    j = new SqliteJournal(dir);
    const error = console.error;
    const said: string[] = [];
    console.error = (m: string) => said.push(m);
    try {
      assert.deepEqual((await j.after(0, 10)).map((e) => e.cursor), [1]);
    } finally {
      console.error = error;
    }
    assert.equal(j.damagedSamples, 2);
    assert.match(
      said.join("\n"),
      /sample 2 \(rollout r\) is damaged and skipped \(the row fails its checksum/,
    );
    j.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("journal: after a failed write nothing more is written, and the error says why and what to do", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const j = new SqliteJournal(dir);
    await j.record(event({ rollout: "r1", kind: "rollout_created", data: {} }));
    // A write that cannot be kept (a value JSON cannot hold) breaks the journal for good.
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await assert.rejects(
      j.record(event({ rollout: "r1", kind: "x", data: cyclic })),
      /journal\.sqlite cannot be written: [^]*Nothing more is written/,
    );
    await assert.rejects(
      j.record(event({ rollout: "r1", kind: "y", data: {} })),
      /cannot be written/,
    );
    await assert.rejects(j.append([sample("r1", 1)]), /cannot be written/);
    j.close();
    const reopened = new SqliteJournal(dir);
    assert.deepEqual((await events(reopened, "r1")).map((e) => e.kind), ["rollout_created"]);
    reopened.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
