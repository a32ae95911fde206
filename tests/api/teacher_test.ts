/**
 * Teacher logprobs over real HTTP, the teacher a TEST DOUBLE of a vLLM server
 * (`tests/support/fake_teacher.ts`, vLLM's exact `prompt_logprobs` shape; the real CPU vLLM as
 * teacher is `tests/engine/distillation_test.ts`): every trained position of every sample gets
 * the teacher's logprob of the id sampled there, read at its own position across bridged turns;
 * untrained positions get none; the agent's turns never wait for the teacher; an outage names the
 * positions it left without scores (a later scoring of the chain fills what it can); scores are
 * journaled and restored; the tree and calls forms carry them; the trainer itself can be the
 * teacher through `/api/teacher/requests` with the gate's delivery (ack, lease, redelivery).
 */
import assert from "node:assert/strict";
import { SqliteJournal } from "../../journal/mod.ts";
import { TeacherQueue, Teachers, VllmTeacher } from "../../generation/mod.ts";
import { FakeTeacher, teacherLogprob } from "../support/fake_teacher.ts";
import { expandCalls, expandTree, flatArrays } from "../support/sample_facts_check.ts";
import {
  agentCall,
  type GatewayTestOptions,
  type RolloutHandle,
  take,
  type TestGateway,
  withGateway,
} from "./loopback_gateway.ts";

const SCORING = { attempts: 2, backoffMs: 10, settleMs: 10_000 };

function teachers(
  fake: FakeTeacher,
  extra: Partial<ConstructorParameters<typeof Teachers>[0]> = {},
) {
  const named = { fake: new VllmTeacher({ name: "fake", url: fake.url, retries: 0 }) };
  return new Teachers({ named, ...extra });
}

/** Chat turns on one chain of `r`: `more(n)` adds `n`, each answered by a trainer (turn 1 cut at length). */
function chat(gw: TestGateway, r: RolloutHandle) {
  const messages: { role: string; content: string }[] = [];
  return async (n: number) => {
    for (let i = 0; i < n; i++) {
      const k = messages.length / 2;
      messages.push({ role: "user", content: `step ${k}` });
      const agent = agentCall(gw, r, "chat/completions", { model: "m", messages });
      const p = await take(gw, r.id);
      const text = k === 1 ? `answer ${k}` : `answer ${k}<|im_end|>`;
      const ids = await gw.gw.model.tokenizer.encode(text);
      const done = await gw.api("POST", `/requests/${p.request_id}/complete`, {
        output_ids: ids,
        logprobs: ids.map(() => -0.1),
        finish_reason: k === 1 ? "length" : "stop",
      });
      assert.equal(done.status, 200, JSON.stringify(done.json));
      const answered = await agent;
      assert.equal(answered.status, 200);
      messages.push({ role: "assistant", content: answered.json.choices[0].message.content });
    }
  };
}

/** Teacher logprobs of `s` (JSON): the double's at trained positions of scored turns, else null. */
// deno-lint-ignore no-explicit-any
function checkTeacher(s: any, missingTurns: string[] = []) {
  assert.equal(s.teacher, "fake");
  assert.equal(s.teacher_logprobs.length, s.input_ids.length);
  const missing = new Set(missingTurns);
  let scored = 0;
  for (const span of s.turn_spans) {
    for (let i = span.start; i < span.end; i++) {
      const trained = s.loss_mask[i] === 1;
      const want = trained && !missing.has(span.turn) ? teacherLogprob(i, s.input_ids[i]) : null;
      assert.equal(s.teacher_logprobs[i], want, `position ${i} of turn ${span.turn}`);
      if (want !== null) scored++;
    }
  }
  assert.deepEqual(
    (s.teacher_missing ?? []).map((m: { turn: string }) => m.turn),
    missingTurns,
  );
  for (const m of s.teacher_missing ?? []) {
    const span = s.turn_spans.find((x: { turn: string }) => x.turn === m.turn);
    assert.deepEqual([m.start, m.end], [span.output_start, span.end], "the missing positions");
  }
  return scored;
}

async function withTeacher(
  o: (fake: FakeTeacher) => GatewayTestOptions,
  fn: (gw: TestGateway, fake: FakeTeacher) => Promise<void>,
) {
  const fake = new FakeTeacher();
  try {
    await withGateway(o(fake), (gw) => fn(gw, fake));
  } finally {
    await fake.close();
  }
}

Deno.test("teacher logprobs: every trained position, none elsewhere, across a bridged turn; every form", async () => {
  await withTeacher(
    (fake) => ({ teachers: teachers(fake), teacherScoring: SCORING }),
    async (gw, fake) => {
      const r = await gw.rollout({ teacher: "fake" });
      await chat(gw, r)(3);
      const fin = await gw.api("POST", `/rollouts/${r.id}/finish`, { reward: 1 });
      assert.equal(fin.status, 200);
      const [s] = fin.json.samples;
      assert.equal(s.turn_spans[2].start < s.turn_spans[2].output_start, true);
      assert.ok(checkTeacher(s) > 0);
      for (const req of fake.requests) assert.equal(req.body.temperature, 0);
      const summary = (await gw.api("GET", `/rollouts/${r.id}`)).json;
      assert.equal(summary.teacher, "fake");
      assert.deepEqual(summary.turn_list.map((t: { teacher_score: string }) => t.teacher_score), [
        "scored",
        "scored",
        "scored",
      ]);
      const b64 = (await gw.api("GET", `/rollouts/${r.id}/samples?ids=base64`)).json.samples[0];
      assert.equal(typeof b64.teacher_logprobs, "string");
      const arrays = flatArrays(gw.gw.store.get(r.id)!.samples()[0]);
      for (const form of ["tree", "calls"]) {
        const json = (await gw.api("GET", `/rollouts/${r.id}/samples?form=${form}`)).json;
        const expand = form === "tree" ? expandTree : expandCalls;
        assert.deepEqual(expand(json), [arrays], `the ${form} form expands to the flat sample`);
      }

      // Without a teacher: no teacher field at all; an unknown name is refused.
      const plain = await gw.rollout();
      await chat(gw, plain)(1);
      const [bare] = (await gw.api("GET", `/rollouts/${plain.id}/samples`)).json.samples;
      assert.equal("teacher_logprobs" in bare, false);
      const unknown = await gw.api("POST", "/rollouts", { teacher: "nope" });
      assert.equal(unknown.status, 400);
      assert.match(unknown.json.error.message, /unknown teacher nope \(known: fake\)/);
      for (const teacher of [{ url: "ftp://teacher" }, { url: "http://t", top: 5 }, 7, ""]) {
        const bad = await gw.api("POST", "/rollouts", { teacher });
        assert.equal(bad.status, 400, JSON.stringify(teacher));
        assert.match(bad.json.error.message, /teacher/);
      }
    },
  );
});

Deno.test("teacher: the agent never waits for it; an outage names the missing positions; a later scoring fills what it can", async () => {
  await withTeacher(
    (fake) => ({ teachers: teachers(fake, { default: "fake" }), teacherScoring: SCORING }),
    async (gw, fake) => {
      // The gateway's default teacher; scoring parked: the agent's turns are answered anyway.
      fake.hold = true;
      const r = await gw.rollout();
      const more = chat(gw, r);
      await more(2);
      const info = (await gw.api("GET", `/rollouts/${r.id}`)).json;
      assert.equal(info.teacher, "fake");
      assert.ok(info.turn_list.every((t: { status: string }) => t.status === "done"));
      assert.ok(
        info.turn_list.some((t: { teacher_score: string }) => t.teacher_score === "pending"),
      );
      fake.release();

      // Down while turn 3 is scored: given up after its tries, named missing in the sample.
      await gw.gw.rollouts.scorer.settled(gw.gw.store.get(r.id)!);
      fake.down = true;
      await more(1);
      const stuck = gw.gw.store.get(r.id)!;
      await gw.gw.rollouts.scorer.settled(stuck);
      const [during] = (await gw.api("GET", `/rollouts/${r.id}/samples`)).json.samples;
      checkTeacher(during, [stuck.turns[2].id]);
      assert.match(during.teacher_missing[0].reason, /503.*gave up after 2 tries/);

      // Back up: the next turn's scoring covers the turn the outage left unscored.
      fake.down = false;
      const before = fake.requests.length;
      await more(1);
      const fin = await gw.api("POST", `/rollouts/${r.id}/finish`, { reward: 1 });
      checkTeacher(fin.json.samples[0]);
      assert.equal(fake.requests.length - before, 1, "one scoring for both turns");

      // A rollout may opt out of the default.
      const none = await gw.rollout({ teacher: null });
      await chat(gw, none)(1);
      assert.equal("teacher" in (await gw.api("GET", `/rollouts/${none.id}`)).json, false);
    },
  );
});

Deno.test("teacher scores are journaled; a restored rollout's unscored turns are scored again", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-teacher-" });
  const fake = new FakeTeacher();
  try {
    const journal = new SqliteJournal(dir);
    let id = "", scoredBefore = 0;
    await withGateway(
      { journal, teachers: teachers(fake), teacherScoring: SCORING },
      async (gw) => {
        const r = await gw.rollout({ teacher: "fake" });
        id = r.id;
        const more = chat(gw, r);
        await more(2);
        await gw.gw.rollouts.scorer.settled(gw.gw.store.get(id)!);
        scoredBefore = fake.requests.length;
        fake.hold = true; // turn 3 is recorded, its scoring never answered before the "crash"
        await more(1);
        gw.gw.rollouts.close("the test stops this gateway"); // scorings stop with it
      },
    );
    journal.close();
    fake.release();
    const again = new SqliteJournal(dir);
    try {
      await withGateway(
        { journal: again, teachers: teachers(fake), teacherScoring: SCORING },
        async (gw) => {
          await gw.gw.restore();
          const fin = await gw.api("POST", `/rollouts/${id}/finish`, { reward: 1 });
          checkTeacher(fin.json.samples[0]);
          const last = fake.requests.at(-1)!;
          assert.ok(fake.requests.length > scoredBefore);
          assert.equal(last.prompt.length, fin.json.samples[0].input_ids.length);
        },
      );
    } finally {
      again.close();
    }
  } finally {
    await fake.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the trainer as teacher: /api/teacher/requests with ack, lease and redelivery", async () => {
  const queue = new TeacherQueue({ ackTimeoutMs: 200 });
  const named = { self: queue.teacher("self") };
  await withGateway({
    teachers: new Teachers({ named }),
    teacherQueue: queue,
    teacherScoring: SCORING,
  }, async (gw) => {
    const r = await gw.rollout({ teacher: "self" });
    await chat(gw, r)(1);
    const first = await gw.api("GET", "/teacher/requests/next?wait=5&teacher=self");
    assert.equal(first.status, 200, JSON.stringify(first.json));
    const { request_id: rid, input_ids: ids, positions, teacher } = first.json;
    assert.equal(teacher, "self");
    assert.equal(positions.length, 1);
    // Not acknowledged in time: offered again, to whoever asks.
    const again = await gw.api("GET", "/teacher/requests/next?wait=5");
    assert.equal(again.json.request_id, rid);
    assert.equal((await gw.api("POST", `/teacher/requests/${rid}/ack`, {})).status, 200);
    const [a, b] = positions[0];
    const bad = await gw.api("POST", `/teacher/requests/${rid}/complete`, { logprobs: [-1] });
    assert.equal(bad.status, 400);
    const logprobs = Array.from({ length: b - a }, (_, k) => teacherLogprob(a + k, ids[a + k]));
    const done = await gw.api("POST", `/teacher/requests/${rid}/complete`, { logprobs });
    assert.equal(done.status, 200, JSON.stringify(done.json));
    assert.equal(
      (await gw.api("POST", `/teacher/requests/${rid}/complete`, { logprobs })).status,
      409,
    );
    const fin = await gw.api("POST", `/rollouts/${r.id}/finish`, { reward: 1 });
    const s = fin.json.samples[0];
    assert.equal(s.teacher, "self");
    for (let i = 0; i < s.input_ids.length; i++) {
      const want = s.loss_mask[i] ? teacherLogprob(i, s.input_ids[i]) : null;
      assert.equal(s.teacher_logprobs[i], want);
    }
  });
});
