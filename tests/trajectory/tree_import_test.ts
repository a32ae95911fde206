/**
 * A saved tree export read back into a rollout gives the same export and the same samples as the
 * live rollout, and a tree whose turn does not extend its parent is refused.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  rolloutFromTree,
  TreeImportError,
  turnTree,
  type TurnTreeExport,
} from "../../trajectory/mod.ts";
import { startGateway } from "./agent_clients.ts";
import { driftRollout, sessionRollout } from "../viewer/rollouts.ts";

Deno.test("a tree export read back gives the same tree and the same samples", async () => {
  const t = await startGateway();
  try {
    for (const r of [await sessionRollout(t), await driftRollout(t)]) {
      const { shared_prefix: _, ...tree } = await t.tree(r.id);
      const saved: TurnTreeExport = JSON.parse(JSON.stringify(tree));
      const imported = rolloutFromTree(saved);
      assert.deepEqual(JSON.parse(JSON.stringify(turnTree(imported))), tree);
      // The export does not hold the rollout's sample options (labels, SFT); given them, the
      // imported rollout's samples are the gateway's.
      const live = t.gw.rollouts.get(r.id)!;
      const samples = imported.samples(live.sampleOptions);
      assert.deepEqual(JSON.parse(JSON.stringify(samples)), await t.samples(r.id));
    }
  } finally {
    await t.close();
  }
});

Deno.test("a tree whose turn does not extend its parent is refused", async () => {
  const t = await startGateway();
  try {
    const r = await sessionRollout(t);
    const tree = await t.tree(r.id);
    const child = tree.turns.find((x) => x.parent !== null)!;
    child.prompt_ids[3] += 1;
    assert.throws(() => rolloutFromTree(tree), TreeImportError);
    assert.throws(
      () => rolloutFromTree({ format: "other" } as unknown as TurnTreeExport),
      /not a rollgate tree export/,
    );
  } finally {
    await t.close();
  }
});
