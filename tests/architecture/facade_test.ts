/**
 * The façade is the only door (issue 31): `RolloutActions` keeps the rollout store, the turn
 * runner and the gate to itself, and the gateway hands out only the façade. Were any of them
 * handed out again, the `@ts-expect-error` lines below would stop being errors and this file
 * would fail its type check; the runtime checks say the same for what JavaScript can see.
 */
import assert from "node:assert/strict";
import { createGateway } from "../../gateway/mod.ts";
import { PolicyModel } from "../../model/mod.ts";
import { RolloutActions } from "../../trajectory/mod.ts";

Deno.test("the façade is the only door to the store, the runner and the gate", async () => {
  const model = await PolicyModel.load();
  const rollouts = new RolloutActions({ model });
  // @ts-expect-error the store is the façade's own
  assert.equal(rollouts.store, undefined);
  // @ts-expect-error the turn runner is the façade's own
  assert.equal(rollouts.runner, undefined);
  // @ts-expect-error the gate is the façade's own
  assert.equal(rollouts.gate, undefined);

  const gw = createGateway({ model });
  assert.deepEqual(Object.keys(gw).sort(), [
    "app",
    "knownPrefixes", // the agent bodies kept to read the next request (counted in /metrics)
    "limits",
    "metrics",
    "model",
    "restore",
    "rollouts",
  ]);
  // @ts-expect-error the gateway hands out the façade, not its store
  assert.equal(gw.store, undefined);
  // @ts-expect-error nor its gate
  assert.equal(gw.gate, undefined);
  // @ts-expect-error nor its runner
  assert.equal(gw.runner, undefined);
});
