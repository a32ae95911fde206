/**
 * Load driver: how long one rollout's cold first turn (a 200 KB rendered prompt) takes to tokenize
 * alone, and while another rollout's 32 MB `count_tokens` is being tokenized (issue 21 measured
 * 0.5 s alone, 31.3 s beside it, when a long text held the long-encode lane to its end). Real
 * Qwen3 tokenizer (Rust binding), the process's lanes, the segment encoder the gateway uses.
 *
 *     deno run -A bench/encode_fairness.ts
 *
 * @module
 */
import { PolicyModel } from "../model/mod.ts";
import { SegmentEncoder } from "../model/segment_encoder.ts";

const model = await PolicyModel.load();
const encoder = () => new SegmentEncoder(model.tokenizer, "<|im_start|>");
const firstTurn = (tag: string) =>
  Array.from(
    { length: 100 },
    (_, i) =>
      `<|im_start|>user\n${`${tag} line ${i}: some tool output text\n`.repeat(55)}<|im_end|>\n`,
  ).join("");
const huge = `<|im_start|>user\n${
  "a pasted log line, 32 bytes long\n".repeat(1_000_000)
}<|im_end|>\n`;

console.log(
  `load average: ${Deno.loadavg().join(" ")} (${navigator.hardwareConcurrency} cores); first turn ${
    (firstTurn("x").length / 1024).toFixed(0)
  } kB, count_tokens ${(huge.length / 1024 / 1024).toFixed(0)} MB`,
);
for (let round = 0; round < 2; round++) {
  let t = performance.now();
  await encoder().encode(firstTurn(`alone${round}`));
  const alone = performance.now() - t;
  const big = encoder();
  t = performance.now();
  const counting = big.encode(huge).then(() => performance.now() - t);
  await new Promise((r) => setTimeout(r, 200)); // the count is well under way
  const t2 = performance.now();
  await encoder().encode(firstTurn(`beside${round}`));
  const beside = performance.now() - t2;
  console.log(
    `round ${round}: first turn alone ${alone.toFixed(0)} ms, beside the 32 MB count ${
      beside.toFixed(0)
    } ms; the count took ${(await counting).toFixed(0)} ms`,
  );
}
