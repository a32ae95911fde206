/**
 * Page loads of the viewer on the 1M-token rollout (`big_rollout.ts`: 200 turns, 6 chains,
 * ~1M distinct ids, samples totalling ~1.6M ids) beside 999 empty rollouts, in real headless
 * Chromium against a gateway on a loopback socket. For each page: the server's time to the first
 * byte, the HTML size, DOMContentLoaded, load, and (token pages) when the script has drawn the
 * ids; the first (cold) load and the median of the next `--runs` (default 5). Then the export:
 * generation time and size, and opening the file offline.
 *
 *     deno run -A bench/viewer_load.ts [--runs 5]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { chromium, type Page } from "playwright-core";
import { createGateway } from "../gateway/mod.ts";
import { PolicyModel } from "../model/mod.ts";
import { buildBigRollout } from "./big_rollout.ts";

const { values } = parseArgs({ options: { runs: { type: "string" } } });
const RUNS = Number(values.runs ?? 5);

const model = await PolicyModel.load({ contextLength: 1 << 20 });
const gw = createGateway({ model });
const rollout = await gw.rollouts.create({
  id: "big",
  metadata: { task: "cache-fix", harness: "bench" },
});
const t0 = performance.now();
const big = await buildBigRollout(model, rollout);
rollout.finish(1);
for (let i = 0; i < 999; i++) {
  await gw.rollouts.create({ id: `small-${i}`, metadata: { task: `task-${i % 20}`, sample: i } });
}
const samples = rollout.samples();
const deepest = samples.find((s) => s.turns.at(-1) === big.deepest.at(-1)!.id)!;
console.log(
  `built in ${((performance.now() - t0) / 1000).toFixed(0)} s: ${rollout.turns.length} turns, ` +
    `${samples.length} samples, ${samples.reduce((n, s) => n + s.input_ids.length, 0)} ids; ` +
    `deepest sample ${deepest.index}: ${deepest.input_ids.length} ids`,
);
// The viewer builds its own samples on the first rollout page (its cache starts cold).
const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, gw.app.fetch);
const base = `http://127.0.0.1:${server.addr.port}/ui`;

const profile = await Deno.makeTempDir({ prefix: "rollgate-bench-chromium-" });
const context = await chromium.launchPersistentContext(profile, {
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
  viewport: { width: 1400, height: 900 },
});
const page = context.pages()[0] ?? await context.newPage();

interface Load {
  ttfb: number;
  bytes: number;
  dcl: number;
  load: number;
  drawn: number | null;
}

async function measure(p: Page, url: string, tokens: boolean): Promise<Load> {
  await p.goto(url, { waitUntil: "load", timeout: 120_000 });
  if (tokens) await p.waitForSelector(".tok span[data-i]");
  return await p.evaluate(() => {
    // The fields of a PerformanceNavigationTiming used here (no DOM types in Deno).
    const n = performance.getEntriesByType("navigation")[0] as unknown as Record<string, number>;
    const drawn = performance.getEntriesByName("rollgate:tokens-drawn")[0];
    return {
      ttfb: n.responseStart - n.requestStart,
      bytes: n.encodedBodySize || n.decodedBodySize,
      dcl: n.domContentLoadedEventEnd - n.startTime,
      load: n.loadEventEnd - n.startTime,
      drawn: drawn ? drawn.startTime : null,
    };
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number | null) => (x === null ? "–" : `${Math.round(x)} ms`);
const rows: string[] = [];
async function bench(name: string, url: string, tokens = false) {
  const cold = await measure(page, url, tokens);
  const warm: Load[] = [];
  for (let i = 0; i < RUNS; i++) warm.push(await measure(page, url, tokens));
  const m = (k: keyof Load) => median(warm.map((w) => w[k] ?? 0));
  rows.push(
    `| ${name} | ${(cold.bytes / 1024).toFixed(0)} KB | ${ms(cold.ttfb)} / ${ms(m("ttfb"))} | ` +
      `${ms(cold.dcl)} / ${ms(m("dcl"))} | ${ms(cold.load)} / ${ms(m("load"))} | ` +
      `${tokens ? `${ms(cold.drawn)} / ${ms(m("drawn"))}` : "–"} |`,
  );
  console.log(rows.at(-1));
}

console.log(
  "| page | HTML | server, first byte (cold / warm) | DOMContentLoaded | load | ids drawn |",
);
await bench("runs (1,000 rollouts)", base);
await bench("rollout (200 turns, 6 chains, 6 samples)", `${base}/rollouts/big`);
await bench("turn (deepest leaf)", `${base}/rollouts/big/turns/${big.deepest.at(-1)!.index}`);
await bench(
  `sample ${deepest.index} tokens, first page (4,096 of ${deepest.input_ids.length} ids)`,
  `${base}/rollouts/big/samples/${deepest.index}`,
  true,
);
await bench(
  `sample ${deepest.index} tokens, last page`,
  `${base}/rollouts/big/samples/${deepest.index}?from=${deepest.input_ids.length - 4096}`,
  true,
);
await bench(
  `turn ${big.deepest.at(-1)!.index} own ids`,
  `${base}/rollouts/big/turns/${big.deepest.at(-1)!.index}/tokens`,
  true,
);

const e0 = performance.now();
const html = await (await fetch(`${base}/rollouts/big/export.html`)).text();
const exportMs = performance.now() - e0;
const file = await Deno.makeTempFile({ prefix: "rollgate-bench-export-", suffix: ".html" });
await Deno.writeTextFile(file, html);
await context.setOffline(true);
const opened = await measure(page, `file://${file}`, true);
console.log(
  `export: generated in ${ms(exportMs)}, ${(html.length / 1e6).toFixed(1)} MB; opened offline: ` +
    `DOMContentLoaded ${ms(opened.dcl)}, load ${ms(opened.load)}, first sample drawn ${
      ms(opened.drawn)
    }`,
);
console.log(`load average: ${(await Deno.readTextFile("/proc/loadavg")).trim()}`);

await context.close();
await Deno.remove(profile, { recursive: true });
await Deno.remove(file);
await server.shutdown();
