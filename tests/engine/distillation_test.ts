/**
 * On-policy distillation against REAL engines: two CPU vLLM servers (the build 0.32.0 in
 * `.venv-engine`), the student `tinyQwen3(0)` generating the turns through the vLLM backend and
 * the teacher `tinyQwen3(1)` (another seed: another model, the same tokenizer) scoring them
 * through its `prompt_logprobs`, a real gateway over HTTP and the official `openai` SDK as the
 * agent. Multi-turn rollouts whose turns stop at `max_tokens` (so each next prompt bridges the
 * end-of-turn id the student did not sample):
 *
 * - every trained position has a teacher logprob equal to the teacher's own recompute of the
 *   sample (`tests/support/engine_truth.ts`, ≤ 1e-3), and every untrained one has none; the
 *   student's logprobs equal the student's recompute;
 * - a teacher outage mid-run (a switchable HTTP proxy in front of the real teacher answers 503:
 *   a TEST DOUBLE of the outage, not of the teacher) leaves the agent's turns answered and the
 *   sample names the positions left without scores, the others still exact.
 *
 * Two servers at once, only here, stopped at the end.
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import { createGateway } from "../../gateway/mod.ts";
import { Teachers, VllmBackend, VllmTeacher } from "../../generation/mod.ts";
import type { Sample } from "../../trajectory/mod.ts";
import { checkEngineTruth, recomputeLogprobs } from "../support/engine_truth.ts";
import { sharedModel } from "../support/scripted_policy.ts";
import { skipGroup } from "../support/skips.ts";
import { engineMissing, startVllm, tinyQwen3 } from "../support/vllm_server.ts";

const GROUP = "real engine (vLLM CPU)";

/** In front of the real teacher: answers 503 while `down` (the outage), else passes through. */
function outageSwitch(target: string) {
  const state = { down: false, refused: 0 };
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    if (state.down) {
      state.refused++;
      await req.body?.cancel();
      return Response.json({ error: { message: "teacher down" } }, { status: 503 });
    }
    const url = new URL(req.url);
    const res = await fetch(target + url.pathname, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal: req.signal,
    });
    return new Response(res.body, { status: res.status, headers: res.headers });
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, state, close: () => server.shutdown() };
}

/**
 * The sample's teacher logprobs against the teacher's recompute: equal (≤ 1e-3) at every trained
 * position of a scored turn, `null` at every other position; returns how many were checked.
 */
async function checkTeacherTruth(url: string, model: string, s: Sample, missing: string[] = []) {
  const truth = await recomputeLogprobs(url, model, s.input_ids);
  const teacher = s.teacher_logprobs as unknown as (number | null)[];
  const gone = new Set(missing);
  const turnAt = (i: number) => s.turn_spans.find((x) => x.start <= i && i < x.end)?.turn;
  let checked = 0, maxAbsDiff = 0, fromStudent = 0;
  for (let i = 0; i < s.input_ids.length; i++) {
    const turn = turnAt(i);
    if (s.loss_mask[i] !== 1 || turn === undefined || gone.has(turn)) {
      assert.equal(teacher[i], null, `position ${i}: no teacher logprob where nothing trains`);
      continue;
    }
    const lp = teacher[i];
    assert.ok(typeof lp === "number", `trained position ${i} has no teacher logprob`);
    const diff = Math.abs(lp - truth[i]);
    assert.ok(diff <= 1e-3, `position ${i}: teacher ${lp}, recompute ${truth[i]}`);
    maxAbsDiff = Math.max(maxAbsDiff, diff);
    fromStudent = Math.max(fromStudent, Math.abs(lp - (s.logprobs[i] as number)));
    checked++;
  }
  // Another model: were these the student's own logprobs, the check above would prove nothing.
  if (checked > 0) {
    assert.ok(fromStudent > 1e-2, "the teacher's logprobs differ from the student's");
  }
  return { checked, maxAbsDiff };
}

Deno.test({
  name:
    "distillation against real vLLMs: teacher logprobs equal the teacher's recompute; an outage names what it missed",
  ignore: skipGroup(GROUP, engineMissing()),
  sanitizeOps: false,
  sanitizeResources: false,
}, async (t) => {
  const model = await sharedModel();
  const [studentDir, teacherDir] = await Promise.all([tinyQwen3(0), tinyQwen3(1)]);
  const started = performance.now();
  const [student, teacher] = await Promise.all([
    startVllm({ model: studentDir, servedName: "student", maxModelLen: 4096 }),
    startVllm({ model: teacherDir, servedName: "teacher", maxModelLen: 4096 }),
  ]);
  console.log(`two vLLMs served in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const outage = outageSwitch(teacher.url);
  const gw = createGateway({
    model,
    backends: {
      vllm: new VllmBackend({ url: student.url, model: student.servedName, timeoutMs: 120_000 }),
    },
    defaultBackend: "vllm",
    teachers: new Teachers({
      named: {
        tiny: new VllmTeacher({
          name: "tiny",
          url: outage.url,
          model: teacher.servedName,
          retries: 0,
          timeoutMs: 120_000,
        }),
      },
    }),
    teacherScoring: { attempts: 2, backoffMs: 200, settleMs: 120_000 },
    keepAliveMs: 200,
  });
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, gw.app.fetch);
  const url = `http://127.0.0.1:${server.addr.port}`;
  // deno-lint-ignore no-explicit-any
  const api = async (method: string, path: string, body?: unknown): Promise<any> => {
    const res = await fetch(`${url}/api${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    assert.ok(res.ok, `${path}: ${res.status} ${text}`);
    return JSON.parse(text);
  };
  /** An agent's rollout with the teacher, and `say(text)` for its next turn. */
  const conversation = async () => {
    const r = await api("POST", "/rollouts", { teacher: "tiny", sampling: { temperature: 1 } });
    const sdk = new OpenAI({ baseURL: `${r.base_url}/v1`, apiKey: r.token, maxRetries: 0 });
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [];
    const say = async (text: string) => {
      messages.push({ role: "user", content: text });
      const answer = await sdk.chat.completions.create({ model: "p", messages, max_tokens: 6 });
      assert.equal(answer.choices[0].finish_reason, "length");
      messages.push(answer.choices[0].message);
    };
    return { id: r.id as string, say };
  };
  let failed = false;
  const step = async (name: string, fn: () => Promise<void>) => {
    if (!await t.step(name, fn)) failed = true;
  };
  try {
    await step("three turns: every trained position scored, exactly the teacher's", async () => {
      const c = await conversation();
      for (const text of ["Say hi.", "Again.", "Once more."]) await c.say(text);
      const [s] = (await api("POST", `/rollouts/${c.id}/finish`, { reward: 1 })).samples;
      assert.equal(s.teacher, "tiny");
      assert.equal(s.teacher_missing, undefined);
      const bridged = s.turn_spans.filter((x: { start: number }) => x.start > 0);
      assert.ok(bridged.length === 2, "two bridged turns");
      const truth = await checkTeacherTruth(teacher.url, teacher.servedName, s);
      assert.equal(truth.checked, s.num_sampled, "every sampled id is trained and scored");
      const own = await checkEngineTruth(student.url, student.servedName, s);
      console.log(
        `teacher: ${truth.checked} positions, max |Δ| ${truth.maxAbsDiff.toExponential(2)}; ` +
          `student: ${own.trained} positions, max |Δ| ${own.maxAbsDiff.toExponential(2)}`,
      );
    });

    await step(
      "a teacher outage mid-run: the agent is answered, the sample names the gap",
      async () => {
        const c = await conversation();
        await c.say("Say hi.");
        await gw.rollouts.scorer.settled(gw.store.get(c.id)!);
        outage.state.down = true;
        const before = performance.now();
        await c.say("Again.");
        await c.say("Once more.");
        const agentMs = performance.now() - before;
        const [s] = (await api("POST", `/rollouts/${c.id}/finish`, { reward: 1 })).samples;
        assert.ok(outage.state.refused >= 2, "the teacher was asked and was down");
        const [first, ...later] = s.turns as string[];
        assert.deepEqual(s.teacher_missing.map((m: { turn: string }) => m.turn), later);
        for (const m of s.teacher_missing) {
          const span = s.turn_spans.find((x: { turn: string }) => x.turn === m.turn);
          assert.deepEqual([m.start, m.end], [span.output_start, span.end]);
          assert.match(m.reason, /503/);
        }
        outage.state.down = false;
        const truth = await checkTeacherTruth(teacher.url, teacher.servedName, s, later);
        assert.ok(truth.checked > 0, `turn ${first} is still scored`);
        console.log(`two turns during the outage answered in ${agentMs.toFixed(0)} ms`);
      },
    );
  } finally {
    if (failed) {
      console.error(`student log:\n${student.log().slice(-3000)}`);
      console.error(`teacher log:\n${teacher.log().slice(-3000)}`);
    }
    await server.shutdown();
    await outage.close();
    await Promise.all([student.stop(), teacher.stop()]);
  }
});
