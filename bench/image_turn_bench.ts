/**
 * What an image costs a turn, over HTTP: `main.ts serve` as users run it (journal on, its images
 * in the data directory) serving a Qwen3-VL policy (`tests/support/vision_models.ts`), one agent
 * speaking Anthropic Messages as Claude Code does (every request re-sends the whole history, its
 * images included), and one trainer loop answering each turn with a `read_file` call (the
 * scripted policy, a TEST DOUBLE at the model boundary).
 *
 * Each scenario is one rollout: a history (`--history` earlier tool results), then `--turns`
 * measured turns after a warm-up, each adding one tool result, of two kinds taken in turn so both
 * see the same history:
 *
 * - `text`: a ~1 kB text result (on an empty history: the floor);
 * - `new image`: a new PNG (1280×800, 100 kB: 1,000 image tokens; or 1920×1080, 1 MB: 2,040),
 *   decoded, hashed, sized from its header and stored once.
 *
 * With images in the history, the `text` turns cost what the agent re-sends: every earlier image,
 * decoded and hashed again to match the history (the gateway holds no bytes to compare with;
 * nothing is stored or tokenized again). The `new image` turn less the `text` turn beside it is
 * what the new image itself costs.
 *
 * The images are a real PNG header (IHDR of the size) followed by distinct random bytes: the
 * gateway reads headers, never pixels, and random bytes are what a screenshot's compressed data
 * costs to copy, decode from base64 and hash. Reported per turn: the agent's wall time (median),
 * the gateway process's CPU (user + system, from `/proc`), the request body, the images stored.
 *
 *     deno run -A bench/image_turn_bench.ts [--turns 20] [--history 20]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { PolicyModel } from "../model/mod.ts";
import { qwen3VlModelDir } from "../tests/support/vision_models.ts";
import { startGatewayProcess } from "./gateway_process.ts";
import { startTrainerLoops } from "./scripted_trainer.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { turns: { type: "string", default: "20" }, history: { type: "string", default: "20" } },
});
const TURNS = Number(values.turns), HISTORY = Number(values.history), WARMUP = 3;

const CRC = new Int32Array(256).map((_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});
function crc32(bytes: Uint8Array): number {
  let c = -1;
  for (const b of bytes) c = CRC[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

let serial = 0;
/** A PNG signature and IHDR of `width`×`height`, then `size` distinct random bytes. */
function pngOf(width: number, height: number, size: number): string {
  const bytes = new Uint8Array(33 + size);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  const view = new DataView(bytes.buffer);
  view.setUint32(16, width);
  view.setUint32(20, height);
  bytes.set([8, 2, 0, 0, 0], 24);
  view.setUint32(29, crc32(bytes.subarray(12, 29)));
  for (let at = 33; at < bytes.length; at += 65536) {
    crypto.getRandomValues(bytes.subarray(at, Math.min(at + 65536, bytes.length)));
  }
  view.setUint32(33, serial++); // distinct even if the random bytes were not
  return (bytes as unknown as { toBase64(): string }).toBase64();
}

const image = (data: string) => ({
  type: "image",
  source: { type: "base64", media_type: "image/png", data },
});
const TEXT_RESULT = Array.from({ length: 40 }, (_, i) => `src/module_${i}.ts  ${i * 37} lines`)
  .join("\n");
const TOOLS = [{
  name: "read_file",
  description: "Read a file.",
  input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
}];

interface Scenario {
  name: string;
  /** The tool results before the measured turns. */
  history: () => unknown[][];
  /** What the measured turns add, taken in turn. */
  kinds: { name: string; result: () => unknown[] }[];
}

const text = { name: "text", result: () => [{ type: "text", text: TEXT_RESULT }] };
const small = { name: "new image 100 kB", result: () => [image(pngOf(1280, 800, 100_000))] };
const large = { name: "new image 1 MB", result: () => [image(pngOf(1920, 1080, 1_000_000))] };
const images = (n: number) => () =>
  Array.from({ length: n }, () => [image(pngOf(1920, 1080, 1_000_000))]);

const SCENARIOS: Scenario[] = [
  { name: "text only (the floor)", history: () => [], kinds: [text] },
  { name: "a new 100 kB image every other turn", history: () => [], kinds: [text, small] },
  { name: "a new 1 MB image every other turn", history: () => [], kinds: [text, large] },
  {
    name: `the same after ${HISTORY} images of 1 MB`,
    history: images(HISTORY),
    kinds: [text, large],
  },
];

const dir = await qwen3VlModelDir();
const model = await PolicyModel.load({ dir });
const CALL = await model.tokenizer.encode(
  '<tool_call>\n{"name": "read_file", "arguments": {"path": "next"}}\n</tool_call><|im_end|>',
);
console.log(
  `load average before: ${Deno.loadavg().join(" ")} (${navigator.hardwareConcurrency} cores)`,
);
const gw = await startGatewayProcess({ serveFlags: ["--model-dir", dir] });
const trainer = startTrainerLoops(gw.url, 1, () => ({ output_ids: CALL }));

async function post(path: string, body: unknown, token?: string) {
  const res = await fetch(`${gw.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { "x-api-key": token } : {}) },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json;
}

function imagesStored(): number {
  let n = 0;
  try {
    for (const shard of Deno.readDirSync(`${gw.dataDir}/images`)) {
      n += [...Deno.readDirSync(`${gw.dataDir}/images/${shard.name}`)].length;
    }
  } catch { /* none yet */ }
  return n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows: string[] = [];
try {
  for (const s of SCENARIOS) {
    const r = await post("/api/rollouts", { metadata: { bench: s.name } });
    const messages: unknown[] = [{ role: "user", content: "Read the files one by one." }];
    let calls = 0;
    /** One agent turn: the history so far plus `result` as the answer to the last call. */
    const turn = async (result: unknown[] | null) => {
      if (result) {
        messages.push({
          role: "user",
          content: [{ type: "tool_result", tool_use_id: `toolu_${calls}`, content: result }],
        });
      }
      const body = JSON.stringify({ model: "m", max_tokens: 64, tools: TOOLS, messages });
      const started = performance.now();
      const answer = await post(`/rollout/${r.id}/v1/messages`, body, r.token);
      const ms = performance.now() - started;
      const use = answer.content.find((b: { type: string }) => b.type === "tool_use");
      calls++;
      messages.push({ role: "assistant", content: [{ ...use, id: `toolu_${calls}` }] });
      return { ms, bytes: body.length, input: answer.usage.input_tokens as number };
    };
    await turn(null);
    for (const h of s.history()) await turn(h);
    for (let i = 0; i < WARMUP; i++) await turn(s.kinds[i % s.kinds.length].result());
    const per = s.kinds.map(() => ({
      times: [] as number[],
      cpu: 0,
      stored: 0,
      last: { bytes: 0, input: 0 },
    }));
    for (let i = 0; i < TURNS * s.kinds.length; i++) {
      const k = i % s.kinds.length;
      const [cpu, stored] = [gw.cpuSeconds(), imagesStored()];
      const done = await turn(s.kinds[k].result());
      per[k].cpu += gw.cpuSeconds() - cpu;
      per[k].stored += imagesStored() - stored;
      per[k].times.push(done.ms);
      per[k].last = done;
    }
    const held = messages.filter((m) => JSON.stringify(m).includes('"type":"image"')).length;
    s.kinds.forEach((kind, k) => {
      const p = per[k];
      rows.push(
        `| ${s.name} (${held} images at the end) | ${kind.name} | ${
          median(p.times).toFixed(1)
        } | ` +
          `${(p.cpu * 1000 / TURNS).toFixed(1)} | ${(p.last.bytes / 1e6).toFixed(2)} MB | ` +
          `${p.last.input} | ${p.stored} |`,
      );
      console.log(rows[rows.length - 1], `(load ${Deno.loadavg()[0]})`);
    });
  }
} finally {
  await trainer.stop();
  await gw.stop();
  await Deno.remove(dir, { recursive: true });
}
console.log(
  `\n${TURNS} measured turns per scenario; load average after: ${Deno.loadavg().join(" ")}`,
);
console.log(
  "| scenario | turn | wall ms (median) | gateway CPU ms | last body | last prompt tokens | images stored |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- |");
for (const row of rows) console.log(row);
