/**
 * What MoE routing replay costs (issue 24), 48 layers × top-8 as uint8 (384 bytes a position):
 *
 * - per turn: a trainer's `routed_experts` for a turn of ~3,300 new positions (a 32k rollout of
 *   10 turns) checked and decoded (`decodeTokenRows`: base64, shape, length), then written to the
 *   journal (`SqliteJournal.putRows`, one SQLite row); the journal bytes a turn adds are printed;
 * - per sample: a sample's rows read back from the journal and laid end to end, then written as
 *   base64 JSON (`TokenRowsRef.toJSON`), at 32k and 128k positions (10 turns each).
 *
 *     deno bench -A bench/routing_bench.ts
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { decodeTokenRows, encodeTokenRows, type TokenRows } from "../generation/mod.ts";
import { SqliteJournal } from "../journal/mod.ts";
import { type RowsPlan, TokenRowsRef } from "../trajectory/mod.ts";

const LAYERS = 48, TOP_K = 8, ROW = LAYERS * TOP_K;

function rows(count: number, seed: number): TokenRows {
  const bytes = new Uint8Array(count * ROW);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 37 + seed) % 128;
  return { dtype: "uint8", shape: [count, LAYERS, TOP_K], bytes };
}

const dir = Deno.makeTempDirSync({ prefix: "rollgate-routing-bench-" });
const journal = new SqliteJournal(dir);
const fileBytes = () => {
  let n = 0;
  for (const f of Deno.readDirSync(dir)) n += Deno.statSync(`${dir}/${f.name}`).size;
  return n;
};

/** One turn's worth: ~3,300 positions (32,768 / 10). */
const TURN = 3277;
const wire = encodeTokenRows(rows(TURN, 1));
let turnNo = 0;

// Journal bytes per turn, measured once before the timed runs.
{
  const before = fileBytes();
  for (let i = 0; i < 20; i++) {
    await journal.putRows("bytes", `bytes.${i}.x`, "routed_experts", rows(TURN, i));
  }
  const per = (fileBytes() - before) / 20;
  console.log(
    `journal bytes per turn of ${TURN} positions: ${(per / 1024).toFixed(0)} KiB (${
      (per / TURN).toFixed(0)
    } B a position; the rows are ${ROW} B); base64 on the wire ${
      (wire.data.length / 1024).toFixed(0)
    } KiB`,
  );
}

Deno.bench(`routing per turn: decode and check ${TURN} rows (base64, 48×8 uint8)`, {
  group: "turn",
}, () => {
  decodeTokenRows("routed_experts", wire, TURN);
});

Deno.bench(`routing per turn: decode, check and write ${TURN} rows to the journal`, {
  group: "turn",
}, async () => {
  const decoded = decodeTokenRows("routed_experts", wire, TURN);
  await journal.putRows("turns", `turns.${turnNo++}.x`, "routed_experts", decoded);
});

/** A sample of `length` positions made of 10 turns' rows in the journal. */
async function samplePlan(length: number): Promise<RowsPlan> {
  const segments = [];
  const per = Math.ceil((length - 1) / 10);
  for (let from = 0, k = 0; from < length - 1; from += per, k++) {
    const count = Math.min(per, length - 1 - from);
    const turn = `s${length}.${k}.x`;
    await journal.putRows(`s${length}`, turn, "routed_experts", rows(count, k));
    segments.push({ turn, from, rows: count });
  }
  return {
    field: "routed_experts",
    dtype: "uint8",
    shape: [length - 1, LAYERS, TOP_K],
    segments,
  };
}

for (const length of [32_768, 131_072]) {
  const ref = new TokenRowsRef(journal, await samplePlan(length));
  const label = `${length / 1024}k`;
  Deno.bench(`sample at ${label}: read its rows from the journal`, { group: label }, () => {
    ref.rows();
  });
  Deno.bench(`sample at ${label}: read and write them as base64 JSON`, { group: label }, () => {
    JSON.stringify(ref);
  });
  // The sample's routing on the wire: base64 of (length − 1) × 384 bytes.
  const text = JSON.stringify(ref);
  console.log(
    `sample at ${label}: routed_experts ${
      (Buffer.byteLength(text) / 2 ** 20).toFixed(1)
    } MiB of JSON`,
  );
}

globalThis.addEventListener("unload", () => {
  journal.close();
  Deno.removeSync(dir, { recursive: true });
});
