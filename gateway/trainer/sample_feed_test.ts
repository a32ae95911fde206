/**
 * The sample feed on its own: an idle stream is kept alive with empty lines (no sample), and a
 * cursor ahead of the newest sample is refused, saying where the log is, instead of skipping
 * silently every sample up to it.
 */
import assert from "node:assert/strict";
import { MemorySampleLog, type Sample } from "../../trajectory/mod.ts";
import { GatewayError } from "../gateway_error.ts";
import { SampleFeed } from "./sample_feed.ts";

Deno.test("sample feed: an idle stream gets empty lines, then the sample; a cursor ahead of the log is a 409", async () => {
  const log = new MemorySampleLog();
  const feed = new SampleFeed(log);
  const res = await feed.response(undefined, 20);
  assert.equal(res.headers.get("x-rollgate-cursor"), "0");
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  assert.equal((await reader.read()).value, "\n", "an idle stream's keep-alive");
  const ids = { input_ids: [1, 2], loss_mask: [0, 1], logprobs: [0, -0.5], sft_mask: [0, 0] };
  await log.append([{ rollout_id: "r1", ...ids } as unknown as Sample]);
  feed.wake();
  let text = "";
  while (!text.includes("r1")) text += (await reader.read()).value;
  assert.deepEqual(text.split("\n").filter(Boolean).map((l) => JSON.parse(l).cursor), [1]);
  await reader.cancel();

  await assert.rejects(
    feed.response(5),
    (e) =>
      e instanceof GatewayError && e.status === 409 &&
      /cursor 5 is ahead of the newest sample of this gateway's log \(1\)/.test(e.message) &&
      /after=1/.test(e.message),
  );
});
