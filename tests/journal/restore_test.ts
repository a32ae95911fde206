/**
 * Restoring from the journal, in process: a gateway whose journal is cut off mid-run (as by a
 * crash) and a second gateway restored from the same file hold the same rollouts, tokens, trees,
 * chains, labels and samples; an unanswered request is back in the queue under its id, completed
 * once; the agent's retry mounts as a retry; the sample stream keeps its cursors; expired and
 * deleted rollouts are not restored.
 *
 * @module
 */
import assert from "node:assert/strict";
import { SqliteJournal } from "../../journal/mod.ts";
import type { Json, TestGateway } from "../trajectory/agent_clients.ts";
import { anthropicTurn, call, chatTurn, startGateway } from "../trajectory/agent_clients.ts";
import { claudeCodeSession, mainBody } from "../trajectory/claude_code_session.ts";
import { answerText } from "../support/scripted_policy.ts";
import { sameMessage } from "../../trajectory/mod.ts";

async function withDir(fn: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-restore-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * Everything a rollout shows the trainer. Each turn's history comes back as the message tree holds
 * it (the first copy of each message), which equals the client's copy message for message under
 * the comparison that mounts requests, not always byte for byte (tool arguments re-serialized);
 * `histories` keeps them apart for that comparison.
 */
async function snapshot(t: TestGateway, id: string) {
  const tree = await t.tree(id);
  const histories = tree.turns.map((turn: Json) => turn.messages);
  for (const turn of tree.turns as Json[]) delete turn.messages;
  const info = (await t.api("GET", `/rollouts/${id}`)).json;
  return { tree, info, samples: await t.samples(id), histories };
}

function sameHistories(a: Json[][], b: Json[][]) {
  assert.equal(a.length, b.length);
  a.forEach((history, i) => {
    assert.equal(history.length, b[i].length, `turn ${i}`);
    history.forEach((m: Json, k: number) =>
      assert.ok(sameMessage(m, b[i][k]), `turn ${i} message ${k}`)
    );
  });
}

/** A gateway on the journal in `dir`; `crash()` cuts the journal off and stops serving. */
async function journaled(dir: string, options: Record<string, unknown> = {}) {
  const journal = new SqliteJournal(dir);
  const t = await startGateway({ journal, ...options });
  return {
    t,
    journal,
    async crash() {
      journal.close(); // nothing written from now on: the process "died" here
      await t.policy.stop();
      await t.close().catch(() => {});
    },
  };
}

Deno.test("restore: rollouts, tokens, trees, chains, labels and samples come back as they were", async () => {
  await withDir(async (dir) => {
    const first = await journaled(dir);
    const live = first.t;
    const done = await live.rollout({ id: "cc-done", metadata: { task: "probe" } });
    await claudeCodeSession(live, done);
    const finished = await live.finish(done.id, 0.75);
    const open = await live.rollout({ id: "cc-open", labels: { side: "mask" } });
    await claudeCodeSession(live, open);
    const submit = await call(`${live.url}/rollout/${open.id}/v1/tools/submit`, {
      method: "POST",
      body: { patch: "diff --git a/x b/x" },
    });
    assert.equal(submit.status, 200);
    const before = { done: await snapshot(live, done.id), open: await snapshot(live, open.id) };
    await first.crash();

    const second = await journaled(dir);
    const report = await second.t.gw.restore();
    assert.deepEqual(
      { ...report, ms: 0 },
      { rollouts: 2, turns: 14, requeued: 0, interrupted: 0, expired: 0, ms: 0 },
    );
    const after = {
      done: await snapshot(second.t, done.id),
      open: await snapshot(second.t, open.id),
    };
    for (const r of ["done", "open"] as const) {
      sameHistories(after[r].histories, before[r].histories);
      assert.deepEqual({ ...after[r], histories: 0 }, { ...before[r], histories: 0 });
    }
    assert.deepEqual(after.done.samples, finished);

    // Tokens still open their rollouts; the restored rollout takes more turns, on its chains.
    second.t.replies.push(answerText("Still here.", "Yes."));
    const next = await anthropicTurn(second.t, open, {
      ...mainBody(),
      messages: [...mainBody().messages, { role: "assistant", content: "x" }, {
        role: "user",
        content: "one more",
      }],
    });
    assert.equal(next.content.at(-1)?.type, "text");
    assert.equal(second.t.replies.unexpected, 0);
    await second.crash();
  });
});

Deno.test("restore: an unanswered request is back in the queue under its id and is completed once; the agent's retry is a retry", async () => {
  await withDir(async (dir) => {
    const first = await journaled(dir);
    await first.t.policy.stop(); // the trainer never answers before the crash
    const r = await first.t.rollout({ id: "pending" });
    const body: Json = {
      model: "m",
      max_tokens: 64,
      messages: [{ role: "user", content: "Say hi" }],
    };
    const lost = call(`${first.t.url}/rollout/${r.id}/v1/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${r.token}` },
      body,
    }).catch(() => null);
    const taken = await first.t.api("GET", `/requests/next?wait=5&rollout=${r.id}`);
    assert.equal(taken.status, 200);
    const requestId = taken.json.request_id;
    await first.crash();
    await lost;

    const second = await journaled(dir);
    await second.t.policy.stop();
    const report = await second.t.gw.restore();
    assert.equal(report?.requeued, 1);
    // The agent retries its request: it mounts onto the restored pending turn.
    const retry = call(`${second.t.url}/rollout/${r.id}/v1/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${r.token}` },
      body,
    });
    // The trainer that held the request before the crash completes it by its old id.
    const ids = await second.t.model.tokenizer.encode("Hi!<|im_end|>");
    const done = await second.t.api("POST", `/requests/${requestId}/complete`, {
      output_ids: ids,
      finish_reason: "stop",
    });
    assert.equal(done.status, 200, JSON.stringify(done.json));
    // The same completion sent again (its answer lost) is told so; another one is refused.
    const again = await second.t.api("POST", `/requests/${requestId}/complete`, {
      output_ids: ids,
      finish_reason: "stop",
    });
    assert.deepEqual([again.status, again.json.resent], [200, true], "completed once");
    const other = await second.t.api("POST", `/requests/${requestId}/complete`, {
      output_ids: ids.slice(1),
      finish_reason: "stop",
    });
    assert.equal(other.status, 409, "completed once");
    const answer = await retry;
    assert.equal(answer.status, 200);
    assert.equal(answer.json.content.at(-1).text, "Hi!");
    const info = (await second.t.api("GET", `/rollouts/${r.id}`)).json;
    assert.deepEqual(info.turns, { total: 1, done: 1, pending: 0, failed: 0 });
    assert.equal(info.turn_list[0].status, "done");
    const tree = await second.t.tree(r.id);
    assert.equal(tree.turns[0].retries, 1, "the retry replayed the restored turn");
    await second.crash();
  });
});

Deno.test("restore: the sample stream keeps its cursors; deleted rollouts are gone, idle ones expire", async () => {
  await withDir(async (dir) => {
    const first = await journaled(dir);
    for (const id of ["a", "b", "gone"]) {
      const r = await first.t.rollout({ id });
      first.t.replies.push(answerText("ok", `answer ${id}`));
      await call(`${first.t.url}/rollout/${id}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${r.token}` },
        body: { model: "m", messages: [{ role: "user", content: id }] },
      });
      if (id !== "gone") await first.t.finish(id, 1);
    }
    assert.equal((await first.t.api("DELETE", "/rollouts/gone")).status, 200);
    await first.crash();

    const second = await journaled(dir, { timeouts: { rolloutIdleMs: 3_600_000 } });
    await second.t.gw.restore();
    assert.equal((await second.t.api("GET", "/rollouts/gone")).status, 404);
    const stream = await fetch(`${second.t.url}/api/samples/stream?after=1`, {
      signal: AbortSignal.timeout(30_000), // the read below ends even if nothing comes
    });
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    const { value } = await reader.read();
    await reader.cancel();
    const line = JSON.parse(value!.split("\n")[0]);
    assert.equal(line.cursor, 2);
    assert.equal(line.rollout_id, "b");
    await second.crash();

    // A day later nothing was touched: the rollouts stay in the journal but are not loaded.
    const third = await journaled(dir);
    const report = await restoreLater(third.t, 86_400_000);
    assert.equal(report?.expired, 2);
    assert.equal((await third.t.api("GET", "/rollouts/a")).status, 410);
    await third.crash();
  });
});

/** `restore` as if `ms` had passed since the journal was written. */
async function restoreLater(t: TestGateway, ms: number) {
  return await t.gw.rollouts.restore(Date.now() + ms);
}

Deno.test("restore: a rollout's template settings survive a restart and shape its next turn", async () => {
  await withDir(async (dir) => {
    const first = await journaled(dir);
    const r = await first.t.rollout({ id: "no-think", template: { enable_thinking: false } });
    const history = [{ role: "user", content: "Say hi" }];
    first.t.replies.push("hi");
    const a = await chatTurn(first.t, r, { model: "m", messages: history });
    await first.crash();

    const second = await journaled(dir);
    await second.t.gw.restore();
    const info = (await second.t.api("GET", `/rollouts/${r.id}`)).json;
    assert.deepEqual(info.template, { enable_thinking: false });
    second.t.replies.push("again");
    await chatTurn(second.t, r, {
      model: "m",
      messages: [...history, { role: "assistant", content: a.content }, {
        role: "user",
        content: "Once more",
      }],
    });
    // The restored rollout renders its new turn with its own setting (Qwen3: thinking off
    // writes an empty think block after the generation prompt).
    const turns = (await second.t.tree(r.id)).turns;
    assert.equal(turns.length, 2);
    const prompt = await second.t.model.decode(turns[1].prompt_ids);
    assert.ok(prompt.endsWith("<|im_start|>assistant\n<think>\n\n</think>\n\n"), prompt);
    assert.equal(second.t.replies.unexpected, 0);
    await second.crash();
  });
});
