/**
 * What a running gateway allocates, or spends its event loop on, by function: connects to the V8
 * inspector of a process started with `--inspect=127.0.0.1:PORT` (e.g. `bench/open_loop.ts
 * --gateway-flags "--inspect=127.0.0.1:9339"`), samples every allocation for a while (collected
 * ones included) and prints the bytes allocated per function and its callers; with `--tenured`,
 * only what no scavenge collected (what feeds the major collections); with `--cpu`, the CPU
 * profile's self time per function instead; with `--died MS`, what was reachable in one heap
 * snapshot and gone from another MS later (state that lives a while, then is replaced).
 *
 *     deno run -A bench/profile_gateway.ts --port 9339 [--after 15] [--seconds 10] [--depth 3]
 *       [--tenured | --cpu | --died 2000]
 *
 * @module
 */
import { Inspector } from "./inspector.ts";

function flag(name: string, fallback: number): number {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Number(Deno.args[i + 1]) : fallback;
}

const port = flag("port", 9339);
// An inspector call in flight does not keep Deno's event loop alive; this does.
const keepAlive = setInterval(() => {}, 1000);
const deadline = Date.now() + 120_000;
let inspector: Inspector | undefined;
while (!inspector) {
  inspector = await Inspector.connect(port).catch(async (e) => {
    if (Date.now() > deadline) throw e;
    await new Promise((r) => setTimeout(r, 500));
    return undefined;
  });
}
await new Promise((r) => setTimeout(r, flag("after", 0) * 1000));
const seconds = flag("seconds", 10);
const died = flag("died", 0);
if (died > 0) {
  const { totalBytes, holders } = await inspector.diedBetweenSnapshots(died, flag("top", 30));
  console.log(
    `died between two snapshots ${died} ms apart: ${(totalBytes / 2 ** 20).toFixed(2)} MB`,
  );
  for (const h of holders) {
    console.log(`  ${(h.bytes / 1024).toFixed(0)} kB  ${h.count} × ${h.what}`);
  }
} else if (Deno.args.includes("--cpu")) {
  await inspector.startCpuProfile();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const { totalMs, functions } = await inspector.stopCpuProfile(flag("top", 30), flag("depth", 1));
  console.log(`CPU profile of the event loop over ${totalMs.toFixed(0)} ms (self time):`);
  for (const f of functions) console.log(`  ${f.ms.toFixed(1)} ms  ${f.where}`);
} else {
  const tenured = Deno.args.includes("--tenured");
  await inspector.startAllocationSampling(32 * 1024, tenured ? "tenured" : "all");
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const top = await inspector.stopAllocationSampling(flag("top", 30), flag("depth", 3));
  const total = top.reduce((n, a) => n + a.bytes, 0);
  const what = tenured ? "allocated and outliving a scavenge" : "allocated";
  console.log(`${what} in ${seconds} s (top ${top.length}: ${(total / 2 ** 20).toFixed(0)} MB):`);
  for (const a of top) console.log(`  ${(a.bytes / 2 ** 20).toFixed(1)} MB  ${a.where}`);
}
inspector.close();
clearInterval(keepAlive);
