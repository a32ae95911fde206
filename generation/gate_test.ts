/** The interception gate's queue: claims, long polls, leases, resolution errors. */
import assert from "node:assert/strict";
import { InterceptionGate } from "./gate.ts";
import { GateError, type GateErrorKind } from "./gate_error.ts";
import { type Completion, GenerationError } from "./backend.ts";
import type { GateCompletion } from "./gate_completion.ts";

const refused = (kind: GateErrorKind) => (e: unknown) => e instanceof GateError && e.kind === kind;

function ask(
  gate: InterceptionGate,
  id: string,
  rollout = "r",
  signal?: AbortSignal,
): Promise<Completion> {
  const p = gate.generate({
    requestId: id,
    rolloutId: rollout,
    turnId: `${id}-turn`,
    promptIds: Int32Array.of(1, 2, 3),
    sampling: { max_tokens: 8, stop_token_ids: [0] },
    signal,
  });
  p.catch(() => {});
  return p;
}

const done: GateCompletion = { output_ids: [5], finish_reason: "stop" };

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
  assert.equal(gate.complete("a", done), "completed");
  assert.deepEqual(await a, done);
  // The same completion again (its answer was lost): told so, nothing changes; another: refused.
  assert.equal(gate.complete("a", done), "resent");
  assert.throws(
    () => gate.complete("a", { ...done, output_ids: [8, 0] }),
    (e) => e instanceof GateError && e.kind === "already_resolved",
  );
  assert.throws(
    () => gate.complete("zz", done),
    (e) => e instanceof GateError && e.kind === "unknown_request",
  );
  gate.cancelRollout("r2", "gone");
  gate.cancelRollout("r", "gone");
});

Deno.test("dropped long poll: a request handed over but never acknowledged is offered again", async () => {
  const gate = new InterceptionGate({ ackTimeoutMs: 50 });
  const answer = ask(gate, "a");
  // The poll's answer is lost on the wire: the trainer never learns of "a".
  assert.equal((await gate.next(0))?.request_id, "a");
  assert.equal(gate.stateOf("a"), "delivered");
  assert.equal(await gate.next(0), null, "owned by the first poll until the ack timeout");
  const again = await gate.next(2_000);
  assert.equal(again?.request_id, "a", "offered again after the ack timeout");
  gate.ack("a");
  gate.complete("a", done);
  assert.deepEqual(await answer, done);
  assert.equal(gate.stats().redelivered, 1);
});

Deno.test("gate: ack grants a lease, renewals keep it, a lapsed lease goes back to the front", async () => {
  const gate = new InterceptionGate({ ackTimeoutMs: 50, defaultLeaseMs: 150 });
  ask(gate, "a");
  ask(gate, "b");
  assert.equal((await gate.next(0))?.request_id, "a");
  const lease = gate.ack("a");
  assert.equal(lease.lease_ms, 150);
  assert.equal(gate.stateOf("a"), "leased");
  for (let i = 0; i < 4; i++) {
    await new Promise((r) => setTimeout(r, 80));
    gate.ack("a"); // renewed before it runs out
  }
  assert.equal(gate.stateOf("a"), "leased", "kept for 320 ms by renewals of a 150 ms lease");
  assert.equal((await gate.next(0))?.request_id, "b");
  gate.ack("b", 60_000);
  await new Promise((r) => setTimeout(r, 250));
  assert.equal(gate.stateOf("a"), "queued", "not renewed: back in the queue");
  assert.equal((await gate.next(0))?.request_id, "a", "at the front");
  // A late renewal by the first holder takes it back while nobody else holds it.
  gate.cancelRollout("r", "done");
});

Deno.test("lease timer overflow: a lease of 2,147,484 s or more is refused, not redelivered at once", async () => {
  const gate = new InterceptionGate();
  ask(gate, "a");
  assert.throws(() => gate.next(0, undefined, undefined, 2_147_484_000), refused("invalid_lease"));
  assert.throws(() => gate.next(0, undefined, undefined, -1), refused("invalid_lease"));
  assert.throws(() => gate.next(0, undefined, undefined, NaN), refused("invalid_lease"));
  assert.equal((await gate.next(0))?.request_id, "a");
  assert.throws(() => gate.ack("a", 2_147_484_000), refused("invalid_lease"));
  assert.equal(gate.ack("a", 3_600_000).lease_ms, 3_600_000, "the bound itself is fine");
  assert.equal(gate.stateOf("a"), "leased");
  assert.throws(() => new InterceptionGate({ defaultLeaseMs: 2 ** 31 }), refused("invalid_lease"));
  gate.cancelRollout("r", "done");
});

Deno.test("gate: the first completion wins, whichever holder sends it", async () => {
  const gate = new InterceptionGate({ ackTimeoutMs: 30 });
  const answer = ask(gate, "a");
  await gate.next(0); // holder 1, never acks
  const second = await gate.next(1_000); // redelivered to holder 2
  assert.equal(second?.request_id, "a");
  gate.complete("a", done); // holder 1 finishes late: still accepted
  assert.deepEqual(await answer, done);
  assert.throws(
    () => gate.complete("a", { ...done, output_ids: [5, 0] }),
    refused("already_resolved"),
  );
  assert.throws(() => gate.ack("a"), refused("already_resolved"));
});

Deno.test("agent gone: the request is withdrawn and a late complete gets `withdrawn`", async () => {
  const gate = new InterceptionGate();
  const agent = new AbortController();
  const answer = ask(gate, "a", "r", agent.signal);
  const queued = new AbortController();
  ask(gate, "q", "r", queued.signal);
  assert.equal((await gate.next(0))?.request_id, "a");
  gate.ack("a");
  agent.abort(new GenerationError("client_gone", "the agent disconnected and did not retry"));
  await assert.rejects(answer, (e) => e instanceof GenerationError && e.kind === "client_gone");
  assert.throws(
    () => gate.complete("a", done),
    (e) => refused("withdrawn")(e) && /did not retry\); discard its generation/.test(String(e)),
  );
  assert.throws(() => gate.ack("a"), refused("withdrawn"));
  assert.throws(() => gate.append("a", [1]), refused("withdrawn"));
  queued.abort();
  assert.equal(await gate.next(0), null, "a withdrawn request leaves the queue");
  assert.equal(gate.pendingCount(), 0);
  assert.equal(gate.stats().withdrawn, 2);

  ask(gate, "c", "r2");
  gate.cancelRollout("r2", "rollout r2 was deleted");
  assert.throws(() => gate.complete("c", done), refused("withdrawn"));
});

Deno.test("gate: an output longer than max_tokens is refused, appended or completed", async () => {
  const gate = new InterceptionGate();
  const answer = ask(gate, "a"); // max_tokens 8
  await gate.next(0);
  assert.throws(
    () => gate.complete("a", { output_ids: new Array(9).fill(5), finish_reason: "length" }),
    (e) => refused("output_too_long")(e) && /has 9 ids.*at most 8/.test(String(e)),
  );
  gate.append("a", [5, 5, 5, 5, 5]);
  assert.throws(() => gate.append("a", [5, 5, 5, 5]), refused("output_too_long"));
  const full = { output_ids: new Array(8).fill(5), finish_reason: "length" as const };
  gate.complete("a", full);
  assert.deepEqual(await answer, full);
});

Deno.test("gate: finished ids are remembered up to a bound", () => {
  const gate = new InterceptionGate({ rememberFinished: 2 });
  for (const id of ["a", "b", "c"]) {
    ask(gate, id);
    gate.fail(id, "no");
  }
  assert.throws(() => gate.complete("c", done), refused("already_resolved"));
  assert.throws(() => gate.complete("a", done), refused("unknown_request"));
});

Deno.test("leased next: handed out leased (no ack), its version fixed; a lost answer waits out the lease", async () => {
  let inForce: string | number = 3;
  const gate = new InterceptionGate({ ackTimeoutMs: 30, versionInForce: () => inForce });
  const a = ask(gate, "a");
  const taken = await gate.next(0, undefined, undefined, 600, {});
  assert.equal(taken?.request_id, "a");
  assert.equal(taken?.lease?.lease_ms, 600);
  assert.ok(Math.abs(taken!.lease!.expires_at - (Date.now() + 600)) < 100, "expires as granted");
  assert.equal(gate.stateOf("a"), "leased", "leased at once: no ack");
  inForce = 4; // a version bumped later is not the one it is generated under
  // The answer is lost: the ack timeout passes and it stays leased; the lease lapses, it is back.
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(gate.stateOf("a"), "leased", "past the ack timeout, still the poll's");
  assert.equal(await gate.next(0), null);
  const again = await gate.next(2_000, undefined, undefined, 60_000, { version: "v9" });
  assert.equal(again?.request_id, "a", "offered again once the lease lapsed");
  assert.equal(gate.stats().redelivered, 1);
  assert.equal(gate.complete("a", done), "completed");
  assert.equal((await a).dispatch_version, 3, "the first lease fixed the version in force then");
  assert.throws(() => gate.ack("a"), refused("already_resolved"), "completed once");

  // A long poll that waits gets it leased too, under the version it names.
  const waiting = gate.next(2_000, undefined, undefined, 60_000, { version: "v9" });
  const b = ask(gate, "b");
  assert.equal((await waiting)?.lease?.lease_ms, 60_000);
  assert.equal(gate.stateOf("b"), "leased");
  gate.complete("b", done);
  assert.equal((await b).dispatch_version, "v9");

  // The two-step form is as it was: delivered, no lease until the ack.
  ask(gate, "c");
  const plain = await gate.next(0);
  assert.equal(plain?.lease, undefined);
  assert.equal(gate.stateOf("c"), "delivered");
  gate.cancelRollout("r", "done");
});

Deno.test("leased next: a withdrawn request refuses its renewal; a lease out of bounds is refused", async () => {
  const gate = new InterceptionGate();
  const agent = new AbortController();
  ask(gate, "a", "r", agent.signal);
  assert.throws(() => gate.next(0, undefined, undefined, 2 ** 31, {}), refused("invalid_lease"));
  assert.equal(gate.stateOf("a"), "queued", "a refused poll takes nothing");
  assert.ok((await gate.next(0, undefined, undefined, undefined, {}))?.lease);
  agent.abort(new GenerationError("client_gone", "the agent disconnected"));
  assert.throws(() => gate.ack("a"), refused("withdrawn"));
  assert.throws(() => gate.complete("a", done), refused("withdrawn"));
});
