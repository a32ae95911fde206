/**
 * The delta form of `GET /api/requests/next` (`?prompt=delta&trainer=ID`) never gives a trainer
 * a wrong prompt. Random sequences of turns on one rollout (extensions, two extensions of one
 * turn at once (a fork), rewrites of an earlier message, client retries, failed requests) are
 * taken by two trainers over the real trainer API, each with its own cache of prompts and
 * outputs that it sometimes loses, taking one or several requests per call in JSON or base64 and
 * completing them one by one or in a batch. Every prompt a trainer rebuilds from a delta (or
 * fetches whole when it lacks the base) must equal the full form of the same request and the
 * turn's recorded prompt, id for id.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createGateway, type Gateway } from "../../gateway/mod.ts";
import type { Message } from "../../canonical/mod.ts";
import { PolicyModel } from "../../model/mod.ts";
import { promptIds, type Turn } from "../../trajectory/mod.ts";
import { answerText, toolCallText } from "../../runner/mod.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const model = await PolicyModel.load();
const OUTPUTS = await Promise.all([
  answerText("Fine.", "All done."),
  toolCallText("Look.", "bash", { command: "ls" }),
  answerText("Hmm.", "Two more steps."),
].map((t) => model.tokenizer.encode(t)));

function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    int: (n: number) => Math.floor(next() * n),
    chance: (p: number) => next() < p,
    pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)],
  };
}

function idsOf(value: number[] | string): number[] {
  if (typeof value !== "string") return value;
  const bytes = Buffer.from(value, "base64");
  return Array.from(new Int32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
}

/** A trainer with its own cache: each completed request's prompt and output, by request id. */
class Trainer {
  readonly kept = new Map<string, number[]>();
  deltas = 0;
  misses = 0;
  constructor(readonly id: string, readonly gw: Gateway) {}

  async api(method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> {
    const res = await this.gw.app.request(`/api${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  }

  /** The whole prompt of a handed-out request, as this trainer sees it. */
  async prompt(body: Json, ids: string): Promise<number[]> {
    const tail = idsOf(body.prompt_ids);
    if (!body.prompt_base) return tail;
    this.deltas++;
    assert.equal(body.prompt_length, body.prompt_base.length + tail.length);
    const known = this.kept.get(body.prompt_base.request_id);
    if (known && known.length >= body.prompt_base.length) {
      return [...known.slice(0, body.prompt_base.length), ...tail];
    }
    this.misses++;
    const whole = await this.api("GET", `/requests/${body.request_id}/prompt?ids=${ids}`);
    assert.equal(whole.status, 200, JSON.stringify(whole.json));
    return idsOf(whole.json.prompt_ids);
  }
}

async function runSequence(
  seed: number,
): Promise<{ deltas: number; misses: number; checked: number }> {
  const r = rng(seed);
  const gw = createGateway({ model });
  const rollout = await gw.rollouts.create({});
  const trainers = [new Trainer("trainer-a", gw), new Trainer("trainer-b", gw)];
  const histories: Message[][] = [[
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: "Fix the bug." },
  ]];
  /** The answered histories, to re-send (a client retry) or extend. */
  const answered: { history: Message[]; turn: Turn }[] = [];
  let checked = 0, n = 0;
  for (let step = 0; step < 16; step++) {
    // The agents' requests of this step: one or two at once.
    const sends: Message[][] = [];
    const kind = r.pick(["extend", "extend", "extend", "fork", "twin", "rewrite", "retry"]);
    const base = answered.length ? r.pick(answered) : undefined;
    const grow = (
      h: Message[],
      t: Turn,
    ) => [...h, t.message!, { role: "user" as const, content: `Next ${n++}.` }];
    if (!base || kind === "extend") sends.push(base ? grow(base.history, base.turn) : histories[0]);
    else if (kind === "twin") {
      sends.push(grow(base.history, base.turn), grow(base.history, base.turn));
    } else if (kind === "fork") sends.push(grow(base.history, base.turn));
    else if (kind === "rewrite") {
      const h = grow(base.history, base.turn);
      const k = 1 + r.int(h.length - 1);
      if (h[k].role === "user") h[k] = { role: "user", content: `${h[k].content} (edited ${n++})` };
      sends.push(h);
    } else sends.push(base.history); // a retry: answered from the recorded turn
    const started = await Promise.all(sends.map((messages) =>
      gw.rollouts.startTurn(rollout, {
        protocol: "chat",
        model: "policy",
        messages,
        tools: [],
        sampling: {},
        stream: false,
      }, "call_")
    ));
    // The trainers take what is pending, one or several per call, as long as there is some.
    const pending = new Map(started.filter((t) => t.status === "pending").map((t) => [t.id, t]));
    while (pending.size > 0) {
      const trainer = r.pick(trainers);
      if (r.chance(0.15)) trainer.kept.clear(); // the trainer restarted and lost its cache
      const ids = r.pick(["base64", "json"]);
      const max = r.chance(0.5) ? 1 + r.int(3) : undefined;
      const next = await trainer.api(
        "GET",
        `/requests/next?wait=5&ids=${ids}&prompt=delta&trainer=${trainer.id}${
          max ? `&max=${max}` : ""
        }`,
      );
      assert.equal(next.status, 200, `seed ${seed} step ${step}: nothing pending (${next.status})`);
      const bodies: Json[] = max ? next.json.requests : [next.json];
      const done: { rid: string; prompt: number[]; output: number[]; fail: boolean }[] = [];
      for (const body of bodies) {
        const turn = pending.get(body.turn_id)!;
        assert.ok(turn, `seed ${seed}: a request of no pending turn`);
        const prompt = await trainer.prompt(body, ids);
        const full = await trainer.api("GET", `/requests/${body.request_id}/prompt?ids=${ids}`);
        assert.deepEqual(
          prompt,
          idsOf(full.json.prompt_ids),
          `seed ${seed} step ${step}: delta ≠ full`,
        );
        assert.deepEqual(
          prompt,
          Array.from(promptIds(turn)),
          `seed ${seed} step ${step}: ≠ the turn's`,
        );
        checked++;
        done.push({ rid: body.request_id, prompt, output: r.pick(OUTPUTS), fail: r.chance(0.1) });
        pending.delete(body.turn_id);
      }
      const completions = done.filter((d) => !d.fail);
      for (const d of done.filter((d) => d.fail)) {
        assert.equal(
          (await trainer.api("POST", `/requests/${d.rid}/fail`, { error: "no" })).status,
          200,
        );
      }
      if (completions.length > 1 || (completions.length === 1 && r.chance(0.5))) {
        const res = await trainer.api("POST", "/requests/complete", {
          completions: completions.map((d) => ({
            request_id: d.rid,
            output_ids: d.output,
            finish_reason: "stop",
          })),
        });
        assert.equal(res.status, 200, JSON.stringify(res.json));
        assert.deepEqual(
          res.json.results.map((x: Json) => x.completed),
          completions.map(() => true),
        );
      } else {
        for (const d of completions) {
          const res = await trainer.api("POST", `/requests/${d.rid}/complete`, {
            output_ids: d.output,
            finish_reason: "stop",
          });
          assert.equal(res.status, 200, JSON.stringify(res.json));
        }
      }
      // Kept only once completed: the next turn of the chain extends prompt and output.
      for (const d of completions) trainer.kept.set(d.rid, [...d.prompt, ...d.output]);
    }
    for (const [k, t] of started.entries()) {
      await t.result.catch(() => {});
      if (t.status === "done") answered.push({ history: sends[k], turn: t });
    }
  }
  const deltas = trainers.reduce((a, t) => a + t.deltas, 0);
  const misses = trainers.reduce((a, t) => a + t.misses, 0);
  return { deltas, misses, checked };
}

Deno.test("prompt delta: every prompt rebuilt from a delta equals the full form and the turn's", async () => {
  let deltas = 0, misses = 0, checked = 0;
  for (let seed = 1; seed <= 25; seed++) {
    const run = await runSequence(seed);
    deltas += run.deltas;
    misses += run.misses;
    checked += run.checked;
  }
  assert.ok(checked >= 300, `only ${checked} prompts checked`);
  assert.ok(deltas >= checked / 3, `only ${deltas} of ${checked} prompts came as deltas`);
  assert.ok(misses > 0 && misses < deltas, `${misses} of ${deltas} deltas missed their base`);
});

Deno.test("prompt delta: only to the trainer that took the base; full by default, unchanged", async () => {
  const gw = createGateway({ model });
  const rollout = await gw.rollouts.create({});
  const [t1, t2] = [new Trainer("t1", gw), new Trainer("t2", gw)];
  let history: Message[] = [{ role: "user", content: "hi" }];
  /** One turn: started, taken by `trainer` with `query`, completed; the body it got. */
  const turn = async (trainer: Trainer, query: string): Promise<Json> => {
    const started = await gw.rollouts.startTurn(rollout, {
      protocol: "chat",
      model: "m",
      messages: history,
      tools: [],
      sampling: {},
      stream: false,
    }, "call_");
    const next = await trainer.api("GET", `/requests/next?wait=5&${query}`);
    assert.equal(next.status, 200);
    const done = await trainer.api("POST", `/requests/${next.json.request_id}/complete`, {
      output_ids: OUTPUTS[0],
      finish_reason: "stop",
    });
    assert.equal(done.status, 200);
    await started.result;
    next.json.promptIds = Array.from(promptIds(started));
    history = [...history, started.message!, { role: "user", content: `more ${history.length}` }];
    return next.json;
  };
  const first = await turn(t1, "prompt=delta&trainer=t1");
  assert.equal(first.prompt_base, undefined, "a chain's first turn has no base");
  const second = await turn(t2, "prompt=delta&trainer=t2");
  assert.equal(second.prompt_base, undefined, "t1 took the base, so t2 gets the whole prompt");
  assert.deepEqual(second.prompt_ids, second.promptIds);
  const third = await turn(t2, "prompt=delta&trainer=t2");
  assert.deepEqual(third.prompt_base, {
    request_id: second.request_id,
    length: second.promptIds.length + OUTPUTS[0].length,
  });
  assert.deepEqual([...second.promptIds, ...OUTPUTS[0], ...third.prompt_ids], third.promptIds);
  assert.equal(third.prompt_length, third.promptIds.length);
  // Without `prompt=delta`: the full form, with the fields it always had.
  const fourth = await turn(t2, "trainer=t2");
  assert.deepEqual(Object.keys(fourth).sort(), [
    "promptIds",
    "prompt_ids",
    "request_id",
    "rollout_id",
    "routed_experts_from",
    "sampling",
    "turn_id",
  ]);
  assert.deepEqual(fourth.prompt_ids, fourth.promptIds);
  for (
    const [query, message] of [
      ["prompt=delta", /trainer=<id>/],
      ["prompt=some", /full or delta/],
      ["max=0", /max must be/],
      ["max=257", /max must be/],
      ["trainer=a%20b", /trainer must be/],
    ] as const
  ) {
    const bad = await t1.api("GET", `/requests/next?wait=0&${query}`);
    assert.equal(bad.status, 400, query);
    assert.match(bad.json.error.message, message);
  }
  // A request that is not pending has no prompt to fetch.
  assert.equal((await t1.api("GET", `/requests/${first.request_id}/prompt`)).status, 409);
  assert.equal((await t1.api("GET", "/requests/req_nope/prompt")).status, 404);
});
