/**
 * The loss mask of a rollout's samples against its exported tree: in each sample, `loss_mask` is
 * 1 exactly on the sampled ids of the turns the sample owns (its own chain, from `trained_from`
 * on) and 0 elsewhere; over all samples, every sampled id of a trained chain has loss 1 in
 * exactly one sample.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Sample, TurnTreeExport } from "../../trajectory/mod.ts";

/**
 * @param trained labels whose chains are trained (default policy: all but `side`, which is
 *   dropped); drift is trained by default, so it does not matter here
 */
export function checkLossOwnership(
  tree: TurnTreeExport,
  samples: readonly (Pick<Sample, "turns" | "chain" | "trained_from"> & {
    input_ids: ArrayLike<number>;
    loss_mask: ArrayLike<number>;
  })[],
  trained: (label: string) => boolean = (label) => label !== "side",
): void {
  const byId = new Map(tree.turns.map((t) => [t.id, t]));
  const trainedIn = new Map<string, number>();
  for (const s of samples) {
    const expected = new Array<number>(s.input_ids.length).fill(0);
    for (const id of s.turns) {
      const t = byId.get(id)!;
      const [a, b] = [t.prompt_ids.length, t.prompt_ids.length + t.output_ids.length];
      assert.deepEqual(Array.from(s.input_ids).slice(a, b), t.output_ids, `sampled ids of ${id}`);
      if (t.chain !== s.chain) {
        assert.ok(b <= s.trained_from, `${id} of another chain lies before trained_from`);
        continue;
      }
      assert.ok(a >= s.trained_from, `${id} of the sample's chain lies after trained_from`);
      if (!trained(t.branch)) continue;
      expected.fill(1, a, b);
      trainedIn.set(id, (trainedIn.get(id) ?? 0) + 1);
    }
    assert.deepEqual(
      Array.from(s.loss_mask),
      expected,
      "loss_mask is 1 exactly on the owned sampled ids",
    );
  }
  for (const t of tree.turns) {
    if (t.status !== "done" || !trained(t.branch)) continue;
    assert.equal(trainedIn.get(t.id), 1, `turn ${t.id} is trained in exactly one sample`);
  }
}
