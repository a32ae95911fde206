/**
 * A finish whose write failed is not "already finished" (found with PostgreSQL restarted under
 * load, `tests/cluster/database_restart_test.ts`): the rollout was marked finished in memory
 * before its journal write failed, so the trainer's finish sent again was a 409 and its reward
 * was never kept. Here the journal (a real SQLite file) is cut off before the finish: both
 * attempts are the journal's 503, and the gateway restored from the file finishes the rollout
 * with its reward.
 *
 * @module
 */
import assert from "node:assert/strict";
import { SqliteJournal } from "../../journal/mod.ts";
import { chatTurn, startGateway } from "../trajectory/agent_clients.ts";
import { answerText } from "../support/scripted_policy.ts";

Deno.test("failed finish: sent again it is the journal's 503, not 409; restored, it finishes with its reward", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-failed-finish-" });
  try {
    const journal = new SqliteJournal(dir);
    const first = await startGateway({ journal });
    const r = await first.rollout({ id: "f1" });
    first.replies.push(answerText("Done.", "Done."));
    await chatTurn(first, r, { model: "m", messages: [{ role: "user", content: "hi" }] });
    journal.close(); // the next write fails
    try {
      for (const attempt of ["first", "again"]) {
        const finish = await first.api("POST", "/rollouts/f1/finish", { reward: 0.5 });
        assert.equal(finish.status, 503, `${attempt}: ${JSON.stringify(finish.json)}`);
        assert.match(finish.json.error.message, /the journal failed/);
      }
    } finally {
      await first.close();
    }

    const second = await startGateway({ journal: new SqliteJournal(dir) });
    try {
      await second.gw.restore();
      const samples = await second.finish("f1", 0.5);
      assert.equal(samples.length, 1);
      assert.equal(samples[0].reward, 0.5);
    } finally {
      await second.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
