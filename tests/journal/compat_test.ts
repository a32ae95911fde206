/**
 * Journals written before the journal events became a discriminated union (issue 22) restore:
 * `__fixtures__/journal-6746b03.sqlite`, written by commit 6746b03 (see the README there), holds
 * every event kind. Restored by today's code, its rollouts, turns, host call, agent exit, retry,
 * failure, reward and logged sample are all back, the waiting turn is in the queue under the
 * request id it had, and completing it records the turn and journals it in the same format.
 */
import assert from "node:assert/strict";
import { copyFileSync } from "node:fs";
import { createGateway } from "../../gateway/mod.ts";
import { SqliteJournal } from "../../journal/mod.ts";
import { PolicyModel } from "../../model/mod.ts";

const FIXTURE = new URL("./__fixtures__/journal-6746b03.sqlite", import.meta.url).pathname;

Deno.test("a journal written by 6746b03 restores, and its waiting turn completes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-compat-" });
  try {
    copyFileSync(FIXTURE, `${dir}/journal.sqlite`);
    const journal = new SqliteJournal(dir);
    const written = Math.max(...(await journal.rollouts()).map((r) => r.lastActivity));
    const model = await PolicyModel.load();
    const gw = createGateway({ model, journal });
    // Restored as of just after it was written (else both rollouts would have expired).
    const report = await gw.rollouts.restore(written + 1_000);
    assert.deepEqual(
      { rollouts: report!.rollouts, turns: report!.turns, requeued: report!.requeued },
      { rollouts: 2, turns: 5, requeued: 1 },
    );

    const kept = gw.rollouts.require("kept");
    assert.deepEqual(kept.metadata, { task: "compat" });
    assert.deepEqual(kept.turns.map((t) => t.status), ["done", "done", "pending"]);
    assert.equal(kept.turns[0].retries, 1, "the client's retry");
    assert.equal(kept.turns[0].message!.tool_calls![0].name, "bash");
    assert.equal(kept.turns[1].message!.content, "One file: README.md.");
    assert.equal(kept.turns[2].parent, kept.turns[1]);
    assert.deepEqual(kept.hostCalls.map((c) => [c.tool, c.args]), [["submit", {
      answer: "README.md",
    }]]);
    assert.deepEqual(
      { code: kept.agentExit?.exit_code, reason: kept.agentExit?.reason },
      { code: 0, reason: "submitted" },
    );

    const done = gw.rollouts.require("done");
    assert.equal(done.status, "finished");
    assert.equal(done.reward, 0.5);
    assert.deepEqual(done.turns.map((t) => [t.status, t.error ?? null]), [
      ["failed", "engine down"],
      ["done", null],
    ]);
    const logged = await gw.rollouts.sampleLog.after(0, 10);
    assert.deepEqual(logged.map((l) => [l.cursor, l.sample.rollout_id]), [[1, "done"]]);

    // The waiting turn is back in the queue under its id; completing it records the turn.
    const pending = await gw.rollouts.next(1_000, "kept");
    assert.equal(pending!.turn_id, kept.turns[2].id);
    assert.ok(gw.rollouts.awaits(pending!.request_id), "the restored turn waits for it");
    const ids = await model.tokenizer.encode("All done.<|im_end|>");
    await gw.rollouts.complete(pending!.request_id, { output_ids: ids, finish_reason: "stop" });
    assert.equal(kept.turns[2].status, "done");
    const [sample] = await gw.rollouts.finish(kept, 1);
    assert.equal(sample.turns.length, 3);
    assert.equal(
      sample.loss_mask.reduce((n, x) => n + x, 0),
      kept.turns.reduce(
        (n, t) => n + t.outputIds.length,
        0,
      ),
    );
    journal.close();

    // What today's code wrote on top restores too.
    const again = new SqliteJournal(dir);
    const next = createGateway({ model, journal: again });
    // As of the fixture's time too: an hour after it was written its other rollout expires.
    const second = await next.rollouts.restore(written + 1_000);
    assert.deepEqual({ rollouts: second!.rollouts, requeued: second!.requeued }, {
      rollouts: 2,
      requeued: 0,
    });
    assert.equal(next.rollouts.require("kept").turns[2].message!.content, "All done.");
    again.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
