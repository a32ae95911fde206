/**
 * The turn tree at scale: the 1M-token rollout of `big_rollout.ts` (200 turns, 6 chains), built
 * once; then measured:
 *
 * - mounting one new turn (history matching alone; + the delta render; the whole turn through
 *   `TurnRunner.start`, undone after each iteration so the tree stays the same size);
 * - linearizing the tree (`buildSamples`, `sharedPrefixTree`) and exporting it (`turnTree`).
 *
 *     deno bench -A bench/tree_bench.ts
 *
 * @module
 */
import type { CanonicalRequest } from "../canonical/mod.ts";
import { PolicyModel } from "../model/mod.ts";
import { buildSamples, Rollout, sharedPrefixTree, TurnTree, turnTree } from "../trajectory/mod.ts";
import { buildBigRollout, request, toolOutput, TOOLS } from "./big_rollout.ts";

/** A roomy context: the deepest chain holds ~250k ids. */
const model = await PolicyModel.load({ contextLength: 1 << 20 });
const rollout = new Rollout("bench", "tok", {}, {});
const built = performance.now();
const big = await buildBigRollout(model, rollout);
const { runner, scriptCall } = big;
const deepest = { turns: big.deepest };
const spt = sharedPrefixTree(rollout);
const samples = buildSamples(rollout);
const exported = JSON.stringify(turnTree(rollout));
console.log(
  `tree: ${rollout.turns.length} turns, ${spt.tokens.length} ids once (shared prefix), ` +
    `${samples.length} samples totalling ${
      samples.reduce((n, s) => n + s.input_ids.length, 0)
    } ids, ` +
    `deepest prompt ${deepest.turns.at(-1)!.promptLength} ids; turnTree JSON ` +
    `${(exported.length / 1e6).toFixed(0)} MB; built in ${
      ((performance.now() - built) / 1000).toFixed(1)
    } s`,
);

/** The next request of the deepest branch: its history + a new ~1k-token tool output. */
let iteration = 0;
function nextRequest(): CanonicalRequest {
  const last = deepest.turns.at(-1)!;
  const answer = last.message!;
  return request([
    ...last.messages,
    answer,
    {
      role: "tool",
      content: toolOutput(999, iteration++, 40),
      tool_call_id: answer.tool_calls![0].id,
    },
  ]);
}
const KEY = TurnTree.rootKey({ protocol: "chat", tools: TOOLS });

Deno.bench("mount: match the next history in the tree (walk only)", { group: "mount" }, () => {
  const req = nextRequest();
  const m = rollout.tree.mount(req.messages, KEY);
  if (m.base !== deepest.turns.at(-1)) throw new Error("did not mount on the deepest leaf");
});

Deno.bench("mount: count_tokens (match + render and tokenize the delta)", {
  group: "mount",
}, async () => {
  await runner.countTokens(rollout, nextRequest());
});

Deno.bench(
  "mount: one new turn end to end (TurnRunner.start + result, instant backend)",
  { group: "mount", n: 200, warmup: 10 },
  async (b) => {
    const req = nextRequest();
    await scriptCall("ls");
    const at = rollout.tree.mount(req.messages, KEY);
    const chain = rollout.chains[deepest.turns.at(-1)!.chain];
    const latest = chain.latest;
    b.start();
    const turn = await runner.start(rollout, req, "call_");
    await turn.result;
    b.end();
    // Undo, so every iteration mounts onto the same 200-turn tree (and continues its chain).
    at.node.children.pop();
    rollout.turns.pop();
    chain.latest = latest;
    latest.next = null;
  },
);

Deno.bench("linearize: buildSamples (every chain, root to leaf)", { group: "linearize" }, () => {
  buildSamples(rollout);
});

Deno.bench("linearize: sharedPrefixTree (every id once)", { group: "linearize" }, () => {
  sharedPrefixTree(rollout);
});

Deno.bench("export: turnTree (per-turn prompts and histories)", {
  group: "linearize",
  n: 5,
  warmup: 1,
}, () => {
  turnTree(rollout);
});
