/**
 * Load driver: what a large `count_tokens` request costs a real gateway process in memory and
 * time. Each size runs against a fresh `main.ts serve` (no journal), and the gateway's peak
 * resident memory (`VmHWM` in `/proc/<pid>/status`) is read before and after one request of that
 * many megabytes of text. (32 MB once peaked at 4.9 GB: about 150 MB per MB.)
 *
 * Run: `deno run -A bench/count_tokens_memory.ts [MB ...]` (default 1 8 32).
 *
 * @module
 */
import { startGateway } from "../tests/support/gateway_process.ts";

const sizes = Deno.args.length ? Deno.args.map(Number) : [1, 8, 32];

function peakRss(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/** Prose-and-code text of about `bytes` characters (what a huge tool output looks like). */
function text(bytes: number): string {
  const lines = [
    "def handler(event, context):\n",
    "    return {'status': 200, 'body': json.dumps(event)}\n",
    "The quick brown fox jumps over the lazy dog while the compiler warns about unused imports.\n",
    "Größe und Übermaß — naïve café au lait, 字符 and ελληνικά in one line.\n",
    "  at Object.<anonymous> (/app/src/index.js:42:13)\n",
  ];
  const parts: string[] = [];
  let n = 0;
  for (let i = 0; n < bytes; i++) {
    const line = lines[i % lines.length];
    parts.push(line);
    n += line.length;
  }
  return parts.join("");
}

console.log(`load: ${Deno.loadavg().map((x) => x.toFixed(2)).join(" ")}`);
console.log("| body | time | peak RSS before | peak RSS after | added | added per MB of body |");
console.log("| ---- | ---- | --------------- | -------------- | ----- | -------------------- |");
for (const mb of sizes) {
  const gw = await startGateway(["--no-journal"]);
  try {
    const create = await fetch(`${gw.url}/api/rollouts`, {
      method: "POST",
      headers: { "content-type": "application/json" }, // the trainer API takes JSON only
      body: "{}",
    });
    const r = await create.json();
    if (!create.ok) throw new Error(JSON.stringify(r));
    const body = JSON.stringify({
      model: "m",
      messages: [{ role: "user", content: text(mb * 1_000_000) }],
    });
    const before = peakRss(gw.pid);
    const started = performance.now();
    const res = await fetch(`${gw.url}/rollout/${r.id}/v1/messages/count_tokens`, {
      method: "POST",
      headers: { authorization: `Bearer ${r.token}`, "content-type": "application/json" },
      body,
    });
    const answer = await res.json();
    const ms = performance.now() - started;
    if (!res.ok) throw new Error(JSON.stringify(answer));
    const after = peakRss(gw.pid);
    const added = (after - before) / 1e6;
    console.log(
      `| ${mb} MB (${answer.input_tokens.toLocaleString("en")} tokens) | ${
        (ms / 1000).toFixed(1)
      } s | ${(before / 1e6).toFixed(0)} MB | ${(after / 1e6).toFixed(0)} MB | ${
        added.toFixed(0)
      } MB | ${(added / mb).toFixed(1)} MB |`,
    );
  } finally {
    await gw.stop();
  }
}
console.log(`load: ${Deno.loadavg().map((x) => x.toFixed(2)).join(" ")}`);
