/**
 * The plots page at scale: a GRPO-shaped run of `--rollouts` rollouts (default 10,000: groups of
 * 8, 1–3 real turns each through the turn runner with the in-memory backend TEST DOUBLE, versions
 * per group, 1 in 7 with a failed last turn; `tests/viewer/grpo_rollouts.ts`) in a live gateway,
 * then: the server's time to build the page (aggregation + SVG) and its size, measured over
 * loopback, the refresh fragment the open page polls every 2 s, the runs page beside it for
 * comparison and `/health` as the floor (loopback and the HTTP stack), and the page in real headless Chromium (DOMContentLoaded, load). Cold = first
 * request, warm = median of the next `--runs` (default 5).
 *
 *     deno run -A bench/viewer_plots.ts [--rollouts 10000] [--runs 5]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import { createGateway } from "../gateway/mod.ts";
import { PolicyModel } from "../model/mod.ts";
import { InMemoryBackendTestDouble } from "../tests/support/in_memory_backend.ts";
import { playGroups } from "../tests/viewer/grpo_rollouts.ts";

const { values } = parseArgs({
  options: { rollouts: { type: "string" }, runs: { type: "string" } },
});
const ROLLOUTS = Number(values.rollouts ?? 10_000);
const RUNS = Number(values.runs ?? 5);
const PER_GROUP = 8;

const model = await PolicyModel.load();
const backend = new InMemoryBackendTestDouble();
// No rollout leaves memory while the bench runs.
const gw = createGateway({ model, backend, timeouts: { rolloutIdleMs: 24 * 3600_000 } });
const t0 = performance.now();
const played = await playGroups(gw, backend, {
  groups: Math.ceil(ROLLOUTS / PER_GROUP),
  perGroup: PER_GROUP,
  startMs: Date.UTC(2026, 0, 1),
  stepMs: 2_000,
  failEvery: 7,
});
const turns = gw.rollouts.list().reduce((n, r) => n + r.turns.length, 0);
console.log(
  `built ${played.length} rollouts (${turns} turns) in ${
    ((performance.now() - t0) / 1000).toFixed(0)
  } s; heap ${(Deno.memoryUsage().heapUsed / 1e6).toFixed(0)} MB`,
);

const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, gw.app.fetch);
const base = `http://127.0.0.1:${server.addr.port}/ui`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number) => `${x.toFixed(0)} ms`;

/** Time to the whole body over loopback, and its size. */
async function fetchTimed(url: string): Promise<{ ms: number; bytes: number }> {
  const s = performance.now();
  const body = await (await fetch(url)).arrayBuffer();
  return { ms: performance.now() - s, bytes: body.byteLength };
}

console.log("| page | HTML | server, whole body (cold / warm) |");
console.log("| ---- | ---- | -------------------------------- |");
for (
  const [name, url] of [
    ["plots", `${base}/plots`],
    ["plots refresh fragment", `${base}/plots?fragment=1`],
    ["runs (200 rows shown)", base],
    ["floor: /health", `${base.replace(/\/ui$/, "")}/health`],
  ]
) {
  const cold = await fetchTimed(url);
  const warm: number[] = [];
  for (let i = 0; i < RUNS; i++) warm.push((await fetchTimed(url)).ms);
  console.log(
    `| ${name} | ${(cold.bytes / 1e3).toFixed(0)} KB | ${ms(cold.ms)} / ${ms(median(warm))} |`,
  );
}

const profile = await Deno.makeTempDir({ prefix: "rollgate-bench-chromium-" });
const context = await chromium.launchPersistentContext(profile, {
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
  viewport: { width: 1400, height: 900 },
});
const page = context.pages()[0] ?? await context.newPage();
const loads: { dcl: number; load: number }[] = [];
for (let i = 0; i <= RUNS; i++) {
  await page.goto(`${base}/plots`, { waitUntil: "load", timeout: 120_000 });
  loads.push(
    await page.evaluate(() => {
      const n = performance.getEntriesByType("navigation")[0] as unknown as Record<string, number>;
      return { dcl: n.domContentLoadedEventEnd - n.startTime, load: n.loadEventEnd - n.startTime };
    }),
  );
}
const marks = await page.locator("svg.plot circle, svg.plot rect").count();
console.log(
  `Chromium, /ui/plots: DOMContentLoaded ${ms(loads[0].dcl)} / ${
    ms(median(loads.slice(1).map((l) => l.dcl)))
  }, load ${ms(loads[0].load)} / ${ms(median(loads.slice(1).map((l) => l.load)))}; ` +
    `${marks} SVG marks drawn`,
);
console.log(`load average: ${(await Deno.readTextFile("/proc/loadavg")).trim()}`);

await context.close();
await Deno.remove(profile, { recursive: true });
await server.shutdown();
