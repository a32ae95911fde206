/**
 * Kept-token sets (a sampler's `sampling_mask`) from a trainer's `complete`, over real HTTP: in
 * vLLM's format (one list of kept ids per output id), checked (one set per id, each holding the
 * id sampled there; otherwise a 400 that changes nothing), stored in the token-row channel (the
 * turn keeps where they lie, not the ids) and exported aligned with `input_ids` across a bridged
 * second turn: the flat sample (`{offsets, ids}`, JSON and base64), the tree and calls forms
 * (which expand to it), the sample log, and again after a restart from the journal. A sampled
 * turn without kept sets is named in `sampling_mask_absent`; a rollout without any has no field.
 */
import assert from "node:assert/strict";
import { idsFromBase64 } from "../../gateway/trainer/id_transport.ts";
import { SqliteJournal } from "../../journal/mod.ts";
import {
  expandCalls,
  expandTree,
  flatArrays,
  keptSetsList,
} from "../support/sample_facts_check.ts";
import { agentCall, take, type TestGateway, withGateway } from "./loopback_gateway.ts";

const USER = { role: "user", content: "one" };

/** What a sampler kept at each sampled id: the id and a few others (distinct per id). */
const keptOf = (ids: number[]) => ids.map((id, i) => [id, id ^ 1, 100 + i].slice(0, 1 + i % 3));

/** Two turns on one chain: the first completed with kept sets, the second with or without. */
async function twoTurns(gw: TestGateway, secondKept: boolean) {
  const r = await gw.rollout({ sampling: { top_k: 4 } });
  const ask = (messages: unknown[]) =>
    agentCall(gw, r, "chat/completions", { model: "m", messages });
  const out1 = await gw.gw.model.tokenizer.encode("Hello there.");
  const out2 = await gw.gw.model.tokenizer.encode("Bye.<|im_end|>");
  const first = ask([USER]);
  const p1 = await take(gw, r.id);
  // Refused, changing nothing: a set short, a set without the sampled id, an id past the vocabulary.
  for (
    const sampling_mask of [
      keptOf(out1).slice(1),
      [[1], ...keptOf(out1).slice(1)],
      [[out1[0], 10_000_000], ...keptOf(out1).slice(1)],
    ]
  ) {
    const bad = await gw.api("POST", `/requests/${p1.request_id}/complete`, {
      output_ids: out1,
      finish_reason: "length",
      sampling_mask,
    });
    assert.equal(bad.status, 400, JSON.stringify(bad.json));
    assert.match(bad.json.error.message, /sampling_mask/);
  }
  const done1 = await gw.api("POST", `/requests/${p1.request_id}/complete`, {
    output_ids: out1,
    finish_reason: "length", // stopped without its end id: the next prompt bridges it
    sampling_mask: keptOf(out1),
  });
  assert.equal(done1.status, 200, JSON.stringify(done1.json));
  const answer = (await first).json.choices[0].message.content;
  const second = ask([USER, { role: "assistant", content: answer }, {
    role: "user",
    content: "2",
  }]);
  const p2 = await take(gw, r.id);
  const done2 = await gw.api("POST", `/requests/${p2.request_id}/complete`, {
    output_ids: out2,
    finish_reason: "stop",
    ...(secondKept ? { sampling_mask: keptOf(out2) } : {}),
  });
  assert.equal(done2.status, 200, JSON.stringify(done2.json));
  assert.equal((await second).status, 200);
  return { id: r.id, out1, out2 };
}

type Run = Awaited<ReturnType<typeof twoTurns>>;

/** Every form of the rollout's sample: kept sets exactly at each turn's sampled ids. */
// deno-lint-ignore no-explicit-any
async function checkForms(gw: TestGateway, run: Run, secondKept: boolean): Promise<any> {
  const [s] = (await gw.api("GET", `/rollouts/${run.id}/samples`)).json.samples;
  const [span1, span2] = s.turn_spans;
  const want: number[][] = s.input_ids.map(() => []);
  keptOf(run.out1).forEach((set, i) => want[span1.output_start + i] = set);
  if (secondKept) keptOf(run.out2).forEach((set, i) => want[span2.output_start + i] = set);
  assert.ok(span2.start < span2.output_start - 1, "turn 2 bridges and adds a delta");
  assert.equal(s.sampling_mask.offsets.length, s.input_ids.length + 1);
  assert.deepEqual(keptSetsList(s.sampling_mask), want, "one kept set per sampled position");
  assert.deepEqual(s.sampling_mask_absent, secondKept ? undefined : [span2.turn]);

  const b64 = (await gw.api("GET", `/rollouts/${run.id}/samples?ids=base64`)).json.samples[0];
  const decoded = {
    offsets: Array.from(idsFromBase64(b64.sampling_mask.offsets)),
    ids: Array.from(idsFromBase64(b64.sampling_mask.ids)),
  };
  assert.deepEqual(decoded, s.sampling_mask);

  const arrays = flatArrays(gw.gw.store.get(run.id)!.samples()[0]);
  assert.deepEqual(arrays.sampling_mask, s.sampling_mask);
  for (const form of ["tree", "calls"]) {
    const json = (await gw.api("GET", `/rollouts/${run.id}/samples?form=${form}`)).json;
    const expand = form === "tree" ? expandTree : expandCalls;
    assert.deepEqual(expand(json), [arrays], `the ${form} form expands to the flat sample`);
  }
  return s;
}

Deno.test("kept sets from a trainer's complete: stored as rows, exported aligned across a bridged turn", async () => {
  await withGateway({}, async (gw) => {
    for (const secondKept of [true, false]) {
      const run = await twoTurns(gw, secondKept);
      const rollout = gw.gw.store.get(run.id)!;
      const [t1] = rollout.turns;
      assert.deepEqual(t1.facts!.rows!.sampling_mask, {
        from: t1.ids.outputStart,
        dtype: "int32",
        shape: [run.out1.length, 1, 4],
      });
      await checkForms(gw, run, secondKept);
    }
    const plain = await gw.rollout();
    const agent = agentCall(gw, plain, "chat/completions", { model: "m", messages: [USER] });
    const p = await take(gw, plain.id);
    await gw.api("POST", `/requests/${p.request_id}/complete`, {
      output_ids: [9707, 151645],
      finish_reason: "stop",
    });
    await agent;
    const [bare] = (await gw.api("GET", `/rollouts/${plain.id}/samples`)).json.samples;
    assert.equal("sampling_mask" in bare, false);
  });
});

Deno.test("kept sets come back from the journal and the sample log", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-kept-" });
  try {
    const journal = new SqliteJournal(dir);
    let run!: Run, before: unknown;
    await withGateway({ journal }, async (gw) => {
      run = await twoTurns(gw, true);
      await gw.api("POST", `/rollouts/${run.id}/finish`, { reward: 1 });
      before = await checkForms(gw, run, true);
    });
    journal.close();
    const again = new SqliteJournal(dir);
    try {
      await withGateway({ journal: again }, async (gw) => {
        await gw.gw.restore();
        const after = await checkForms(gw, run, true);
        const [logged] = await again.after(0, 1);
        assert.deepEqual(
          JSON.parse(JSON.stringify(logged.sample)).sampling_mask,
          after.sampling_mask,
        );
        assert.deepEqual(after, before);
      });
    } finally {
      again.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
