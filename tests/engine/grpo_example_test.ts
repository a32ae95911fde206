/**
 * `npm run example:grpo` (`clients/python/examples/grpo_trl.py`): TRL's `GRPOTrainer` on CPU with
 * the TRL adapter, the real pi CLI through a real gateway, the gate resolved by the trainer's own
 * model. Two steps, and the plumbing is checked, not the learning: TRL's loss covers exactly the
 * sampled ids of the rollouts' samples, the recorded logprobs equal the trainer's own forward
 * pass before each update (≤ 1e-3), the weights changed, the plot is a PNG. The curve over more
 * steps is in `docs/trainers/trl.md`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { pi } from "../../harness/mod.ts";
import { cliMissing, skipGroup } from "../support/skips.ts";
import { engineMissing } from "../support/vllm_server.ts";
import { ENGINE_GROUP } from "./agent_model.ts";

const ROOT = decodeURIComponent(new URL("../../", import.meta.url).pathname);
const missing = engineMissing() ?? cliMissing(pi);

Deno.test({
  name: `${ENGINE_GROUP}: npm run example:grpo, two GRPO steps of TRL over pi rollouts` +
    (missing ? ` [skipped: ${missing}]` : ""),
  ignore: skipGroup(ENGINE_GROUP, missing),
  async fn() {
    const tmp = await Deno.makeTempDir({ prefix: "rollgate-grpo-test-" });
    try {
      const plot = `${tmp}/reward.png`;
      const started = performance.now();
      const out = await new Deno.Command("npm", {
        args: ["run", "--silent", "example:grpo", "--", "--steps", "2", "--plot", plot],
        cwd: ROOT,
        stdin: "null",
        signal: AbortSignal.timeout(1_800_000),
      }).output();
      const stdout = new TextDecoder().decode(out.stdout);
      const stderr = new TextDecoder().decode(out.stderr);
      console.log(`example:grpo --steps 2: ${Math.round(performance.now() - started)} ms`);
      assert.ok(out.success, `exit ${out.code}\n${stderr.slice(-6000)}`);
      const last = JSON.parse(stdout.trim().split("\n").at(-1)!);
      assert.equal(last.steps, 2);
      assert.equal(last.reward_mean.length, 2);
      for (const r of last.reward_mean) assert.ok(r >= 0 && r <= 1, `a reward mean ${r}`);
      assert.deepEqual(
        last.trained_tokens,
        last.sampled_ids,
        "TRL's loss covers exactly the sampled ids of the samples",
      );
      for (const n of last.trained_tokens) assert.ok(n > 0, "every step trains some ids");
      assert.ok(
        last.logprob_max_abs_diff <= 1e-3,
        `recorded vs the trainer's forward: ${last.logprob_max_abs_diff}`,
      );
      assert.equal(last.weights_changed, true);
      const png = await Deno.readFile(plot);
      assert.deepEqual([...png.slice(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], "a PNG");
      console.log(JSON.stringify(last));
    } finally {
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
  },
});
