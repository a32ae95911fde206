/**
 * No behaviour change on the turn path: what generated conversations and the 1M-token tree of the
 * benches hand out (samples under several label policies, the shared-prefix export, the turn-tree
 * export) is digest-for-digest what the code gave before the memory work of issue 11
 * (`tests/support/golden.ts`; the digests in `__fixtures__/golden.json` were recorded from the
 * code before it, commit a78209d, and checked again on a second run of it). The random sequences
 * of `properties_test.ts` and the recorded CLI sessions of `tests/recordings/replay_test.ts` are
 * checked the same way in those files. Main's session-scoped retries for OpenCode (9438ed0) changed
 * the OpenCode recordings' output; their digests were recorded again from main at 6fd613c without
 * issue 11's code, and are what this branch gives too.
 *
 * Real Qwen3 tokenizer and template; generation by the in-memory backend TEST DOUBLE.
 */
import { PolicyModel } from "../../model/mod.ts";
import { Rollout } from "../../trajectory/mod.ts";
import { generateConversations } from "../invariants/conversation_generator.ts";
import { driveConversation } from "../invariants/drive.ts";
import { buildBigRollout } from "../../bench/big_rollout.ts";
import { GoldenDigests, handedOut } from "../support/golden.ts";

const golden = new GoldenDigests(new URL("./__fixtures__/golden.json", import.meta.url));
const model = await PolicyModel.load();

Deno.test("generated conversations: samples and exports as before", async () => {
  for (const g of generateConversations(5000, 24)) {
    const c = await driveConversation(model, g, {
      stripEndOfTurn: (k) => g.seed % 3 === 0 && k % 2 === 1,
      logprobs: g.seed % 4 !== 1,
    });
    c.rollout.finish(g.seed % 2);
    golden.check(`conversation ${g.seed}`, handedOut(c.rollout));
  }
});

Deno.test("the 1M-token tree of the benches: samples and exports as before", async () => {
  const big = await PolicyModel.load({ contextLength: 1 << 20 });
  const rollout = new Rollout("big", "tok", {}, {});
  await buildBigRollout(big, rollout);
  rollout.finish(1);
  golden.check("big rollout", handedOut(rollout, { promptIds: false }));
});
