/**
 * A rollout's tools are journaled once (the `shared` table, by content hash), and every turn's
 * `turn_registered` names them by the array its tree interned: the same object turn after turn,
 * so the journal serializes and hashes a tool set (Claude Code's is ~48 kB) once, not per turn.
 * The turns read back from the file with their tools.
 *
 * @module
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { SqliteJournal } from "../../journal/mod.ts";
import type { JournalEvent } from "../../trajectory/mod.ts";
import { chatTurn, startGateway } from "../trajectory/agent_clients.ts";
import { answerText } from "../support/scripted_policy.ts";

class WatchedJournal extends SqliteJournal {
  readonly registered: JournalEvent[] = [];
  override record(event: JournalEvent): Promise<void> {
    if (event.kind === "turn_registered") this.registered.push(event);
    return super.record(event);
  }
}

const TOOLS = [{
  type: "function",
  function: {
    name: "bash",
    description: "Run a command.",
    parameters: { type: "object", properties: { command: { type: "string" } } },
  },
}];

Deno.test("journal: a rollout's turns name one interned tools array, stored once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-shared-tools-" });
  try {
    const journal = new WatchedJournal(dir);
    const t = await startGateway({ journal });
    try {
      const r = await t.rollout({ id: "s1" });
      const messages: Record<string, unknown>[] = [{ role: "user", content: "hi" }];
      for (const reply of ["One.", "Two.", "Three."]) {
        t.replies.push(answerText(reply, reply));
        // Each request carries its own copy of the tools, as an agent's body does.
        const a = await chatTurn(t, r, { model: "m", messages, tools: structuredClone(TOOLS) });
        messages.push({ role: "assistant", content: a.content }, {
          role: "user",
          content: `next after ${reply}`,
        });
      }
    } finally {
      await t.close();
      journal.close();
    }
    const tools = journal.registered.map((e) => e.shared?.tools);
    assert.equal(tools.length, 3);
    assert.ok(tools[0] && tools.every((x) => x === tools[0]), "one tools object for every turn");
    const db = new DatabaseSync(`${dir}/journal.sqlite`, { readOnly: true });
    try {
      const shared = db.prepare("SELECT COUNT(*) AS n FROM shared").get() as { n: number };
      assert.equal(shared.n, 1, "the tool set stored once");
    } finally {
      db.close();
    }
    const reread = new SqliteJournal(dir);
    try {
      const events = [];
      for await (const e of reread.events("s1")) events.push(e);
      const back = events.filter((e) => e.kind === "turn_registered").map((e) => e.shared?.tools);
      assert.equal(back.length, 3);
      for (const x of back) assert.deepEqual(x, tools[0], "each turn reads its tools back");
    } finally {
      reread.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
