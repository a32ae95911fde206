/**
 * The properties every random sequence of `properties_test.ts` must leave true of its rollout:
 * what the backend got and gave is what was recorded, no request makes two live turns, prompts
 * extend their parent's exact ids, special text is where it says, the shared-prefix export holds
 * each turn once, and for several label policies every sample's masks (loss, logprobs, SFT), loss
 * ownership (every sampled id trained in exactly one sample, unless a label drops it), its turn
 * spans against the turns, its routing rows position by position (`sample_facts_check.ts`), and
 * the tree and calls export forms expanding to the flat samples exactly.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Completion } from "../../generation/mod.ts";
import {
  buildSamples,
  callsExport,
  chainOf,
  DEFAULT_LABEL_POLICY,
  type LabelPolicy,
  promptIds,
  type Rollout,
  sameMessage,
  sharedPrefixTree,
  treeExport,
  type Turn,
  TurnTree,
} from "../../trajectory/mod.ts";
import type { InMemoryBackendTestDouble } from "../support/in_memory_backend.ts";
import {
  checkSampleFacts,
  expandCalls,
  expandTree,
  flatArrays,
} from "../support/sample_facts_check.ts";
import { model } from "./property_generators.ts";

const EOT = model.endOfTurnId;
const NL = (await model.tokenizer.encode("\n"))[0];
/**
 * Scaffolding the template puts around tool outputs. (A tool output may itself hold `<tool_call>`
 * text, e.g. a sub-agent's report quoting its malformed call; that is content, and the decoded
 * comparison of each SFT run covers it.)
 */
const MARKERS = new Set(
  ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<tool_response>", "</tool_response>"]
    .map((t) => model.idOf(t)!),
);
const OPEN = model.toolResponseMarkers!.open, CLOSE = model.toolResponseMarkers!.close;

const POLICIES: Partial<LabelPolicy>[] = [
  {},
  { side: "train", drift: "mask" },
  { main: "mask", subagent: "drop", side: "mask", compaction: "drop", rewrite: "mask" },
  { main: "drop", retry: "drop", side: "train" },
];

export async function checkRollout(
  rollout: Rollout,
  backend: InMemoryBackendTestDouble,
  queued: Completion[],
) {
  const done = rollout.turns.filter((t) => t.status === "done");

  // What the backend got and gave is what was recorded; nothing was generated twice.
  assert.equal(
    backend.requests.length,
    done.length +
      rollout.turns.filter((t) => t.status === "failed" && t.outputIds.length > 0).length,
  );
  backend.requests.forEach((r, k) => {
    const turn = rollout.turns.find((t) => t.id === r.turnId)!;
    assert.deepEqual(Array.from(r.promptIds), Array.from(promptIds(turn)));
    assert.deepEqual(Array.from(turn.outputIds), queued[k].output_ids);
    assert.deepEqual(turn.logprobs && Array.from(turn.logprobs), queued[k].logprobs ?? null);
  });

  // No two live turns for one request (of one client session: another session's identical
  // request is a fresh sample, a request naming no session is matched on content alone).
  const live = rollout.turns.filter((t) => t.status !== "failed");
  for (let i = 0; i < live.length; i++) {
    for (let j = i + 1; j < live.length; j++) {
      const a = live[i], b = live[j];
      const same = TurnTree.toolsKey(a.tools) === TurnTree.toolsKey(b.tools) &&
        a.messages.length === b.messages.length &&
        a.messages.every((m, k) => sameMessage(m, b.messages[k]));
      const replayable = b.session === null || b.session === a.session;
      assert.ok(!(same && replayable), `turns ${a.id} and ${b.id} record the same request`);
    }
  }

  // Prompts: the parent's exact ids (sampled ids verbatim), the bridge, the delta.
  for (const t of done) {
    const ids = Array.from(promptIds(t));
    assert.equal(ids.length, t.promptLength);
    if (t.parent) {
      const p = t.parent;
      const head = [...promptIds(p), ...p.outputIds];
      assert.deepEqual(ids.slice(0, head.length), head);
      assert.deepEqual(Array.from(t.bridgeIds), p.outputIds.at(-1) === EOT ? [] : [EOT]);
    } else {
      assert.deepEqual(Array.from(t.bridgeIds), []);
    }
  }

  // Special text: plain text in the split mode; else at a control id of the prompt.
  for (const t of done) {
    const ids = Array.from(promptIds(t));
    for (const h of t.specialText) {
      if (rollout.splitSpecialTokens) assert.equal(h.position, null);
      else if (h.position !== null) assert.equal(ids[h.position], model.idOf(h.token));
      assert.equal(t.messages[h.message].content.slice(h.offset).startsWith(h.token), true);
    }
  }

  // The shared-prefix export: every turn once; outputs partition the sampled positions.
  const sp = sharedPrefixTree(rollout);
  assert.deepEqual(sp.nodes.map((n) => n.turn), done.map((t) => t.id));
  assert.equal(sp.tokens.length, sp.sampled.length);
  assert.equal(sp.tokens.length, sp.logprobs.length);
  const owner = new Array<string | null>(sp.tokens.length).fill(null);
  let cursor = 0;
  sp.nodes.forEach((n, k) => {
    const t = done[k];
    assert.equal(n.context[0], cursor);
    assert.equal(n.context[1], n.output[0]);
    cursor = n.output[1];
    for (let i = n.output[0]; i < n.output[1]; i++) {
      assert.equal(owner[i], null, "a sampled position owned twice");
      owner[i] = t.id;
    }
    assert.deepEqual(sp.tokens.slice(...n.output), Array.from(t.outputIds));
    assert.deepEqual(
      sp.logprobs.slice(...n.output),
      t.logprobs ? Array.from(t.logprobs) : Array.from(t.outputIds, () => null),
    );
    const parent = t.parent ? [...promptIds(t.parent), ...t.parent.outputIds] : [];
    assert.deepEqual([...parent, ...sp.tokens.slice(...n.context)], Array.from(promptIds(t)));
  });
  assert.equal(cursor, sp.tokens.length);
  for (let i = 0; i < sp.tokens.length; i++) {
    assert.equal(sp.sampled[i], owner[i] === null ? 0 : 1, `sampled flag at ${i}`);
    if (owner[i] === null) assert.equal(sp.logprobs[i], 0);
  }
  assert.equal(
    sp.sampled.reduce((a, b) => a + b, 0),
    done.reduce((n, t) => n + t.outputIds.length, 0),
  );

  for (const labels of POLICIES) await checkSamples(rollout, done, labels);
}

async function checkSamples(rollout: Rollout, done: Turn[], labels: Partial<LabelPolicy>) {
  const policy = { ...DEFAULT_LABEL_POLICY, ...labels };
  const samples = buildSamples(rollout, { labels });
  /** Per done turn: the samples that hold it as their own, and those that put loss on it. */
  const owners = new Map<Turn, number>(), trainedIn = new Map<Turn, number>();
  for (const s of samples) {
    const leaf = done.find((t) => t.id === s.turns.at(-1))!;
    const path = chainOf(leaf);
    assert.deepEqual(s.turns, path.map((t) => t.id));
    const chain = rollout.chains[leaf.chain];
    const label = chain.label;
    assert.equal(s.branch, label);
    assert.notEqual(policy[label], "drop");
    assert.deepEqual(s.input_ids, Int32Array.from([...promptIds(leaf), ...leaf.outputIds]));
    const n = s.input_ids.length;
    assert.deepEqual([s.loss_mask.length, s.logprobs.length, s.sft_mask.length], [n, n, n]);

    // The path: turns of the chains this one forked from, then the chain's own turns.
    const own = path.findIndex((t) => t.chain === leaf.chain);
    assert.ok(path.slice(own).every((t) => t.chain === leaf.chain), "own turns are a suffix");
    assert.equal(path[own], chain.root, "the own part starts at the chain's root");
    const first = path[own];
    assert.equal(
      s.trained_from,
      first.promptLength - first.bridgeIds.length - first.deltaIds.length,
    );
    if (own > 0) {
      assert.equal(first.parent!.chain, chain.parent, "a fork hangs off the chain it shares");
      assert.equal(s.parent?.turn, first.parent!.id);
    } else assert.equal(s.trained_from, 0);

    const loss = new Array(n).fill(0), logprobs = new Array(n).fill(0);
    const sampled = new Array(n).fill(false);
    for (const t of path) {
      const mine = t.chain === leaf.chain;
      if (mine) owners.set(t, (owners.get(t) ?? 0) + 1);
      const a = t.promptLength, b = a + t.outputIds.length;
      assert.deepEqual(Array.from(s.input_ids.slice(a, b)), Array.from(t.outputIds));
      const learn = mine && policy[label] === "train" && !(t.drift && policy.drift !== "train");
      if (learn && b > a) trainedIn.set(t, (trainedIn.get(t) ?? 0) + 1);
      for (let i = a; i < b; i++) {
        sampled[i] = true;
        loss[i] = learn ? 1 : 0;
        // Never a 0 (p = 1) for a turn that reported none: NaN, `null` in JSON.
        logprobs[i] = t.logprobs ? t.logprobs[i - a] : NaN;
      }
    }
    const absent = path.filter((t) => !t.logprobs && t.outputIds.length > 0).map((t) => t.id);
    assert.deepEqual(s.logprobs_absent, absent.length ? absent : undefined, "logprobs_absent");
    assert.deepEqual(
      s.loss_mask,
      Uint8Array.from(loss),
      "loss_mask: 1 exactly on sampled ids of own trained turns",
    );
    assert.ok(
      s.loss_mask.slice(0, s.trained_from).every((x) => x === 0),
      "no loss before trained_from",
    );
    assert.deepEqual(
      s.logprobs,
      Float64Array.from(logprobs),
      "logprobs aligned with the sampled ids",
    );
    for (let i = 0; i < n; i++) {
      if (s.loss_mask[i] === 1) assert.ok(sampled[i]);
      if (s.logprobs[i] !== 0) assert.ok(sampled[i], "logprob on an id nobody sampled");
    }
    await checkSft(s.input_ids, s.sft_mask, sampled, path);
    // Spans against the turns; every turn was routed, so rows cover all but the last position.
    checkSampleFacts(s, rollout.turns, true);
  }
  // The tree and calls forms expand to these samples exactly.
  const json = (v: unknown) =>
    JSON.parse(
      JSON.stringify(v, (_k, x) => ArrayBuffer.isView(x) ? Array.from(x as Int32Array) : x),
    );
  const flat = json(samples.map(flatArrays));
  const tree = json(treeExport(rollout.id, null, rollout.turns, samples, rollout.rows));
  assert.deepEqual(expandTree(tree), flat, "the tree form expands to the flat samples");
  const calls = json(callsExport(rollout.id, null, rollout.turns, samples, rollout.rows));
  assert.deepEqual(expandCalls(calls), flat, "the calls form expands to the flat samples");
  // Loss ownership: every sampled id has loss 1 in exactly one sample when its chain's label and
  // the drift policy train it, and in none otherwise; every turn is one sample's own, or dropped.
  for (const t of done) {
    const action = policy[rollout.chains[t.chain].label];
    assert.equal(owners.get(t) ?? 0, action === "drop" ? 0 : 1, `turn ${t.id} owned once`);
    const trains = action === "train" && !(t.drift && policy.drift !== "train") &&
      t.outputIds.length > 0;
    assert.equal(trainedIn.get(t) ?? 0, trains ? 1 : 0, `turn ${t.id}: samples with loss on it`);
  }
}

/**
 * Tool outputs rendered by a chain, in order (what each turn's delta or full render holds), as the
 * tokenizer sees them: lone surrogates become U+FFFD, text is NFC-normalized.
 */
function renderedToolOutputs(chain: Turn[]): string[] {
  return chain.flatMap((t) =>
    t.messages.slice(t.messages.length - t.renderedMessages).flatMap((m) =>
      m.role === "tool" ? [m.content.toWellFormed().normalize("NFC")] : []
    )
  );
}

async function checkSft(ids: Int32Array, sft: Uint8Array, sampled: boolean[], chain: Turn[]) {
  const runs: [number, number][] = [];
  for (let i = 0; i < sft.length; i++) {
    if (sft[i] !== 1) continue;
    assert.ok(!sampled[i], "sft_mask on a sampled id");
    assert.ok(!MARKERS.has(ids[i]), `sft_mask on template token ${ids[i]}`);
    const s = i;
    while (i < sft.length && sft[i] === 1) i++;
    runs.push([s, i]);
  }
  for (const [a, b] of runs) {
    assert.ok(ids[a - 1] === OPEN || (ids[a - 1] === NL && ids[a - 2] === OPEN), "run start");
    assert.ok(ids[b] === CLOSE || (ids[b] === NL && ids[b + 1] === CLOSE), "run end");
  }
  const outputs = renderedToolOutputs(chain);
  const texts = await Promise.all(runs.map(([a, b]) => model.decode(Array.from(ids.slice(a, b)))));
  // Every non-empty output has its run; an empty output has none (only scaffolding is there).
  const expected = outputs.filter((c) => c !== "");
  assert.equal(texts.length, expected.length, `sft runs ${JSON.stringify(texts)}`);
  texts.forEach((t, k) => {
    const c = expected[k];
    assert.ok(
      [c, "\n" + c, c + "\n", "\n" + c + "\n"].includes(t),
      `sft run ${JSON.stringify(t.slice(0, 200))} is not the output ${
        JSON.stringify(c.slice(0, 200))
      }`,
    );
  });
}
