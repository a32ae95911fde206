/** The interception gate's queue: claims, long polls, leases, resolution errors. */
import assert from "node:assert/strict";
import { GateError, InterceptionGate } from "./gate.ts";
import type { Completion } from "./backend.ts";

function ask(gate: InterceptionGate, id: string, rollout = "r"): Promise<Completion> {
  const p = gate.generate({
    requestId: id,
    rolloutId: rollout,
    turnId: `${id}-turn`,
    promptIds: [1, 2, 3],
    sampling: { max_tokens: 8, stop_token_ids: [0] },
  });
  p.catch(() => {});
  return p;
}

const done: Completion = { output_ids: [5], finish_reason: "stop" };

Deno.test("gate: oldest request first, rollout filter, long poll delivery", async () => {
  const gate = new InterceptionGate();
  const a = ask(gate, "a", "r1");
  ask(gate, "b", "r2");
  assert.equal((await gate.next(0, "r2"))?.request_id, "b");
  assert.equal((await gate.next(0))?.request_id, "a");
  assert.equal(await gate.next(0), null);
  const waiting = gate.next(5_000);
  ask(gate, "c");
  assert.equal((await waiting)?.request_id, "c");
  gate.complete("a", done);
  assert.deepEqual(await a, done);
  assert.throws(
    () => gate.complete("a", done),
    (e) => e instanceof GateError && e.kind === "already_resolved",
  );
  assert.throws(
    () => gate.complete("zz", done),
    (e) => e instanceof GateError && e.kind === "unknown_request",
  );
  gate.cancelRollout("r2", "gone");
  gate.cancelRollout("r", "gone");
});

Deno.test("gate: an unresolved lease puts the request back, a resolved one does not", async () => {
  const gate = new InterceptionGate();
  const answer = ask(gate, "a");
  assert.equal((await gate.next(0, undefined, undefined, 30))?.request_id, "a");
  assert.equal(await gate.next(0), null, "claimed: not offered again while leased");
  const again = await gate.next(2_000);
  assert.equal(again?.request_id, "a", "the lease ran out: offered again");
  gate.complete("a", done);
  assert.deepEqual(await answer, done);

  ask(gate, "b");
  await gate.next(0, undefined, undefined, 30);
  gate.complete("b", done);
  assert.equal(await gate.next(100), null, "a resolved request is never offered again");
  assert.equal(gate.pendingCount(), 0);
});
