/**
 * A completion without logprobs leaves them absent, never 0 (a logprob of 0 is p = 1): over real
 * HTTP through the gate, a turn completed with logprobs and one completed without. Every form a
 * trainer or a person reads says so at every sampled position of the second turn: the flat
 * sample (JSON `null`, base64 NaN), the tree and calls forms (both transports), the rollout's
 * tree export, the sample log, the viewer's token data, and all of them again after a restart
 * from the journal.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { SqliteJournal } from "../../journal/mod.ts";
import { sampleTokens, TokenText } from "../../viewer/mod.ts";
import { expandCalls, expandTree } from "../support/sample_facts_check.ts";
import {
  agentCall,
  READ_FILE_TOOL,
  take,
  type TestGateway,
  withGateway,
} from "./loopback_gateway.ts";

const tools = [{ type: "function", function: READ_FILE_TOOL }];
const USER = { role: "user", content: "Read the README." };
const CALL =
  '<tool_call>\n{"name": "read_file", "arguments": {"path": "README.md"}}\n</tool_call><|im_end|>';

/** Float64 values of a base64 `float64le` array. */
function float64s(text: string): number[] {
  const bytes = Buffer.from(text, "base64");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Array.from({ length: bytes.byteLength / 8 }, (_, i) => view.getFloat64(i * 8, true));
}

/** A tool call answered with logprobs, then an answer completed without any. */
async function twoTurns(gw: TestGateway) {
  const r = await gw.rollout();
  const agent1 = agentCall(gw, r, "chat/completions", { model: "m", tools, messages: [USER] });
  const p1 = await take(gw, r.id);
  const out1 = await gw.gw.model.tokenizer.encode(CALL);
  const lps1 = out1.map((_, i) => -0.5 - i / 100);
  const done1 = await gw.api("POST", `/requests/${p1.request_id}/complete`, {
    output_ids: out1,
    logprobs: lps1,
    finish_reason: "stop",
  });
  assert.equal(done1.status, 200, JSON.stringify(done1.json));
  const first = await agent1;
  const message = first.json.choices[0].message;
  const agent2 = agentCall(gw, r, "chat/completions", {
    model: "m",
    tools,
    messages: [USER, message, {
      role: "tool",
      tool_call_id: message.tool_calls[0].id,
      content: "# hello",
    }],
  });
  const p2 = await take(gw, r.id);
  const out2 = await gw.gw.model.tokenizer.encode("Hello.<|im_end|>");
  const done2 = await gw.api("POST", `/requests/${p2.request_id}/complete`, {
    output_ids: out2,
    finish_reason: "stop",
  });
  assert.equal(done2.status, 200, JSON.stringify(done2.json));
  assert.equal((await agent2).status, 200);
  return {
    id: r.id,
    lps1,
    /** Where each turn's sampled ids lie in the sample. */
    turn1: [p1.prompt_ids.length, p1.prompt_ids.length + out1.length],
    turn2: [p2.prompt_ids.length, p2.prompt_ids.length + out2.length],
  };
}

type Run = Awaited<ReturnType<typeof twoTurns>>;

/** `logprobs` (with `absent` as the absent marker) holds turn 1's values, `absent` on turn 2. */
function checkLogprobs(run: Run, logprobs: readonly unknown[], absent: unknown, what: string) {
  const [a1, b1] = run.turn1, [a2, b2] = run.turn2;
  assert.equal(logprobs.length, b2, `${what}: one logprob slot per id`);
  assert.deepEqual(logprobs.slice(a1, b1), run.lps1, `${what}: turn 1's logprobs`);
  const second = logprobs.slice(a2, b2);
  assert.ok(second.length > 0);
  for (const [i, lp] of second.entries()) {
    const missing = Number.isNaN(absent) ? Number.isNaN(lp) : lp === absent;
    assert.ok(missing, `${what}: turn 2's sampled id ${i} has ${lp}, not "absent"`);
  }
  for (let i = 0; i < b2; i++) {
    if (i >= a1 && i < b1 || i >= a2) continue;
    assert.equal(logprobs[i], 0, `${what}: context position ${i}`);
  }
}

/** Every form of the rollout's samples, read over HTTP. */
async function everyForm(gw: TestGateway, run: Run) {
  const flat = (await gw.api("GET", `/rollouts/${run.id}/samples`)).json.samples;
  assert.equal(flat.length, 1);
  const [s] = flat;
  checkLogprobs(run, s.logprobs, null, "flat JSON");
  const [span1, span2] = s.turn_spans;
  assert.equal(span1.logprobs_absent, undefined);
  assert.equal(span2.logprobs_absent, true);
  assert.deepEqual(s.logprobs_absent, [span2.turn]);

  const compact = (await gw.api("GET", `/rollouts/${run.id}/samples?ids=base64`)).json.samples[0];
  checkLogprobs(run, float64s(compact.logprobs), NaN, "flat base64");
  assert.deepEqual(compact.logprobs_absent, [span2.turn]);

  const arrays = {
    input_ids: s.input_ids,
    loss_mask: s.loss_mask,
    logprobs: s.logprobs,
    sft_mask: s.sft_mask,
    routed_experts: null,
  };
  const tree = (await gw.api("GET", `/rollouts/${run.id}/samples?form=tree`)).json;
  assert.deepEqual(expandTree(tree), [arrays], "the tree form expands to the flat sample");
  assert.deepEqual(tree.samples[0].logprobs_absent, [span2.turn]);
  const calls = (await gw.api("GET", `/rollouts/${run.id}/samples?form=calls`)).json;
  assert.deepEqual(expandCalls(calls), [arrays], "the calls form expands to the flat sample");
  assert.deepEqual(calls.calls[1].logprobs, calls.calls[1].output_ids.map(() => null));
  for (const form of ["tree", "calls"]) {
    const b64 = (await gw.api("GET", `/rollouts/${run.id}/samples?form=${form}&ids=base64`)).json;
    const parts = form === "tree" ? b64.segments : b64.calls;
    const decoded = float64s(parts[1].logprobs);
    assert.ok(decoded.length > 0);
    const outputs = form === "tree" ? decoded.slice(-(run.turn2[1] - run.turn2[0])) : decoded;
    assert.ok(outputs.every(Number.isNaN), `${form} base64: NaN on turn 2's sampled ids`);
  }

  const exported = (await gw.api("GET", `/rollouts/${run.id}/tree`)).json;
  assert.deepEqual(exported.turns.map((t: { logprobs: unknown }) => t.logprobs), [
    run.lps1,
    null,
  ]);
  const prefix = exported.shared_prefix;
  const [node1, node2] = prefix.nodes;
  assert.deepEqual(prefix.logprobs.slice(...node1.output), run.lps1);
  const second = prefix.logprobs.slice(...node2.output);
  assert.ok(second.length > 0 && second.every((lp: unknown) => lp === null));
  return s;
}

/** The first logged sample of `GET /api/samples/stream`. */
async function firstLogged(url: string) {
  const res = await fetch(`${url}/api/samples/stream?after=0`);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) text += (await reader.read()).value ?? "";
  await reader.cancel();
  return JSON.parse(text.split("\n")[0]);
}

/** The viewer's token data shows no logprob for turn 2, with and without the rollout's turns. */
async function checkViewer(gw: TestGateway, id: string) {
  const text = new TokenText((ids) => gw.gw.model.decode(ids));
  const rollout = gw.gw.rollouts.get(id)!;
  const [sample] = rollout.samples();
  const outputs2 = rollout.turns[1].outputIds.length;
  for (const source of [rollout, null]) {
    const d = await sampleTokens(text, sample, source, 0, sample.input_ids.length);
    const shown = source ? d.logprobs.slice(-outputs2) : d.logprobs;
    assert.ok(shown.slice(-outputs2).every((lp) => lp === null), "no logprob shown for turn 2");
    assert.ok(d.logprobs.every((lp) => lp !== 0), "no 0 shown as a logprob");
  }
}

Deno.test("a completion without logprobs: null/NaN at its sampled ids in every form, never 0", async () => {
  await withGateway({}, async (gw) => {
    const run = await twoTurns(gw);
    await everyForm(gw, run);
    await checkViewer(gw, run.id);
    const fin = await gw.api("POST", `/rollouts/${run.id}/finish`, { reward: 1 });
    checkLogprobs(run, fin.json.samples[0].logprobs, null, "finish answer");
    const logged = await firstLogged(gw.url);
    checkLogprobs(run, logged.logprobs, null, "sample log");
    assert.deepEqual(logged.logprobs_absent, fin.json.samples[0].logprobs_absent);
  });
});

Deno.test("absent logprobs stay absent across a restart from the journal", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-absent-" });
  try {
    const journal = new SqliteJournal(dir);
    let run!: Run;
    let before: unknown;
    await withGateway({ journal }, async (gw) => {
      run = await twoTurns(gw);
      await gw.api("POST", `/rollouts/${run.id}/finish`, { reward: 1 });
      before = await everyForm(gw, run);
    });
    journal.close();
    const again = new SqliteJournal(dir);
    try {
      await withGateway({ journal: again }, async (gw) => {
        await gw.gw.restore();
        const after = await everyForm(gw, run);
        const { timings: _t1, ...b } = before as Record<string, unknown>;
        const { timings: _t2, ...a } = after;
        assert.deepEqual(a, b, "the sample as before the restart");
        await checkViewer(gw, run.id);
        checkLogprobs(run, (await firstLogged(gw.url)).logprobs, null, "sample log after restart");
      });
    } finally {
      again.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
