/**
 * Per-rollout template settings (`template` in `POST /api/rollouts`) over real HTTP, on the
 * bundled Qwen3 (whose template reads `enable_thinking`): a rollout's setting shapes its prompt
 * from its first turn and on every later one, another rollout of the same gateway keeps the
 * gateway's default, the setting is shown in the summary, the tree and the samples, `audit`
 * re-renders with it, and a key or value the family does not take is a 400 that names it and
 * what is accepted, with no rollout created.
 *
 * @module
 */
import assert from "node:assert/strict";
import { answerText } from "../support/scripted_policy.ts";
import { auditTree, formatAudit } from "../../trajectory/mod.ts";
import { chatTurn, type Json, type TestGateway, withGateway } from "../trajectory/agent_clients.ts";

/** What Qwen3's template writes after the generation prompt when thinking is off. */
const THINKING_OFF = "<|im_start|>assistant\n<think>\n\n</think>\n\n";
const THINKING_ON = "<|im_start|>assistant\n";

async function promptTexts(t: TestGateway, id: string): Promise<string[]> {
  const tree = await t.tree(id);
  return await Promise.all(tree.turns.map((turn: Json) => t.model.decode(turn.prompt_ids)));
}

Deno.test("template: a rollout's enable_thinking renders from its first turn; another rollout on the gateway keeps the default", async () => {
  await withGateway(async (t) => {
    const off = await t.rollout({ id: "off", template: { enable_thinking: false } });
    const on = await t.rollout({ id: "on" });
    const first = [{ role: "user", content: "Say hi" }];
    // Interleaved, so a setting leaking from one rollout to the other would show.
    t.replies.push("hi", answerText("greet", "hi"), "again", answerText("again", "again"));
    const a1 = await chatTurn(t, off, { model: "m", messages: first });
    const b1 = await chatTurn(t, on, { model: "m", messages: first });
    const next = (a: { content: string }) => [
      ...first,
      { role: "assistant", content: a.content },
      { role: "user", content: "Once more" },
    ];
    await chatTurn(t, off, { model: "m", messages: next(a1) });
    await chatTurn(t, on, { model: "m", messages: next(b1) });

    const [offFirst, offSecond] = await promptTexts(t, "off");
    const [onFirst, onSecond] = await promptTexts(t, "on");
    assert.ok(offFirst.endsWith(THINKING_OFF), offFirst);
    assert.ok(offSecond.endsWith(THINKING_OFF), offSecond);
    assert.ok(onFirst.endsWith(THINKING_ON) && !onFirst.endsWith(THINKING_OFF), onFirst);
    assert.ok(onSecond.endsWith(THINKING_ON) && !onSecond.endsWith(THINKING_OFF), onSecond);
    // The scripted policy saw the same prompts.
    assert.ok(t.replies.prompts[0].endsWith(THINKING_OFF));
    assert.ok(!t.replies.prompts[1].endsWith(THINKING_OFF));

    // Recorded where the trainer reads it; the default rollout carries nothing.
    assert.deepEqual((await t.api("GET", "/rollouts/off")).json.template, {
      enable_thinking: false,
    });
    assert.equal((await t.api("GET", "/rollouts/on")).json.template, undefined);
    const tree = await t.tree("off");
    assert.deepEqual(tree.rollout.template, { enable_thinking: false });
    for (const s of await t.samples("off")) {
      assert.deepEqual(s.metadata.template, { enable_thinking: false });
    }
    for (const s of await t.samples("on")) assert.equal(s.metadata.template, undefined);

    // The audit re-renders each rollout with its own settings. With thinking off, Qwen3's
    // template writes the empty think block only in the generation prompt, so a re-render of
    // the second turn differs there (and only there); with thinking on, both turns are equal.
    const on_ = await auditTree(t.model, await t.tree("on"));
    assert.deepEqual(on_.turns.map((a) => a.equals_full_render), [true, true]);
    const off_ = await auditTree(t.model, await t.tree("off"));
    assert.equal(off_.turns[0].equals_full_render, true, formatAudit(off_));
    assert.deepEqual(
      off_.turns[1].differences?.map((d) => [d.turn, d.in]),
      [[off_.turns[0].turn, "generation_prompt"]],
      formatAudit(off_),
    );
  });
});

Deno.test("template: a key or value the family does not take is a 400 naming it and what is accepted", async () => {
  await withGateway(async (t) => {
    const unknownKey = await t.api("POST", "/rollouts", {
      id: "bad-key",
      template: { reasoning_effort: "high" },
    });
    assert.equal(unknownKey.status, 400);
    assert.equal(unknownKey.json.error.type, "invalid_request");
    assert.match(unknownKey.json.error.message, /template\.reasoning_effort/);
    assert.match(unknownKey.json.error.message, /qwen3/);
    assert.match(unknownKey.json.error.message, /enable_thinking \(true, false\)/);

    const badValue = await t.api("POST", "/rollouts", {
      id: "bad-value",
      template: { enable_thinking: "no" },
    });
    assert.equal(badValue.status, 400);
    assert.match(badValue.json.error.message, /template\.enable_thinking: "no"/);
    assert.match(badValue.json.error.message, /accepted: true, false/);

    const notScalar = await t.api("POST", "/rollouts", {
      id: "bad-type",
      template: { enable_thinking: { on: true } },
    });
    assert.equal(notScalar.status, 400);
    assert.match(notScalar.json.error.message, /template\.enable_thinking/);

    // Nothing was created by the refused calls.
    const list = (await t.api("GET", "/rollouts")).json.rollouts;
    assert.deepEqual(list.map((r: Json) => r.id), []);
  });
});
