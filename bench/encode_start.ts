/**
 * Load driver: what starting a native encode costs the event loop. `tokenizer.encode` hands the
 * text to the binding's thread pool and returns a promise; the time until it returns is the
 * event loop's. Measured with 1, 4 and 16 encodes of a ~1 kB tool output in flight at once
 * (the real Qwen3 tokenizer, Rust binding), against the wall time per encode.
 *
 *     deno run -A bench/encode_start.ts
 *
 * @module
 */
import { Tokenizer } from "tokenizers";
import { loadModelFiles } from "../model/mod.ts";

const tokenizer = Tokenizer.fromFile((await loadModelFiles()).tokenizerPath);
const text = "def f(x):\n    return x + 1\n".repeat(40);
const CALLS = 1600;

console.log(`load average: ${Deno.loadavg().join(" ")} (${navigator.hardwareConcurrency} cores)`);
for (const inFlight of [1, 4, 16]) {
  for (let round = 0; round < 2; round++) {
    let starting = 0;
    const began = performance.now();
    await Promise.all(Array.from({ length: inFlight }, async (_, worker) => {
      for (let k = 0; k < CALLS / inFlight; k++) {
        const t = performance.now();
        const encoding = tokenizer.encode(`${text}${worker}.${k}`, null, {
          addSpecialTokens: false,
        });
        starting += performance.now() - t;
        (await encoding).getIds();
      }
    }));
    const µs = (ms: number) => (ms / CALLS * 1000).toFixed(1);
    console.log(
      `${inFlight} in flight: starting an encode ${µs(starting)} µs, wall per encode ${
        µs(performance.now() - began)
      } µs`,
    );
  }
}
