/**
 * Load driver: where the CPU of one 128k-token turn goes, part by part, in one process.
 *
 * - the whole in-process turn (`TurnRunner.start` → answer, the instant backend TEST DOUBLE):
 *   mount, delta render, tokenize, prompt ids for the backend, parse, record;
 * - the agent's request body (an OpenAI Chat history of the same size, ~450 kB): UTF-8 decode,
 *   `JSON.parse`, and schema check + conversion to the canonical request;
 * - the prompt ids a backend gets (`promptIds`: a view of the chain's line of ids, issue 20),
 *   against what it cost before (a JS array pushed id by id, assembled here from the turns);
 * - reading that body over a real loopback socket with `readJsonBody`: its length declared (one
 *   read) or the same stream without a declared length (read chunk by chunk under the cap).
 *
 * CPU is the process's user + system time (all threads) per operation.
 *
 *     deno run -A bench/turn_parts_128k.ts [--tokens 128000]
 *
 * @module
 */
import process from "node:process";
import { DEFAULT_MAX_BODY_BYTES, readJsonBody } from "../gateway/mod.ts";
import { toCanonicalRequest } from "../gateway/agent/openai_chat/mod.ts";
import { PolicyModel } from "../model/mod.ts";
import { promptIds, RolloutStore, type Turn, TurnRunner } from "../trajectory/mod.ts";
import { chatBody } from "./http_fixture.ts";
import { InstantBackend } from "./instant_backend.ts";
import { chatRequest, MEASURED_OUTPUT, nextMessages, primeRollout } from "./turn_fixture.ts";

const i = Deno.args.indexOf("--tokens");
const TOKENS = i >= 0 ? Number(Deno.args[i + 1]) : 128000;

/** CPU milliseconds per call of `f` over `n` calls (after one unmeasured call). */
async function cpuMs(n: number, f: () => unknown): Promise<number> {
  await f();
  const start = process.cpuUsage();
  for (let k = 0; k < n; k++) await f();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / n;
}

const report = (what: string, ms: number[]) =>
  console.log(`${what}: ${ms.map((x) => x.toFixed(2)).join(" / ")} ms CPU (3 rounds)`);
const rounds = async (
  n: number,
  f: () => unknown,
) => [await cpuMs(n, f), await cpuMs(n, f), await cpuMs(n, f)];

console.log(`load average: ${Deno.loadavg().join(" ")}`);
const model = await PolicyModel.load();
const backend = new InstantBackend();
const runner = new TurnRunner(model, backend);
const primed = await primeRollout(model, runner, backend, new RolloutStore(), {
  id: "parts",
  targetTokens: TOKENS,
  lines: [10, 30],
  seed: 1,
});
backend.answerWith(await model.tokenizer.encode(MEASURED_OUTPUT));
console.log(`prompt of a measured turn: ${primed.promptTokens} tokens`);

report(
  "whole in-process turn",
  await rounds(100, async () => {
    const turn = await runner.start(primed.rollout, chatRequest(nextMessages(primed)), "call_");
    await turn.result;
    primed.reset();
  }),
);

// The Chat body an agent sends for this history: canonical messages with Chat's tool calls.
const body = chatBody(
  nextMessages(primed).map((m) =>
    m.role === "assistant" && m.tool_calls
      ? {
        ...m,
        tool_calls: m.tool_calls.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: c.arguments },
        })),
      }
      : m
  ),
  false,
);
const bytes = new TextEncoder().encode(body);
console.log(`request body: ${(bytes.length / 1000).toFixed(0)} kB`);
report("UTF-8 decode of the body", await rounds(100, () => new TextDecoder().decode(bytes)));
report("JSON.parse of the body", await rounds(100, () => JSON.parse(body)));
const parse = await rounds(100, () => JSON.parse(body));
const convert = await rounds(100, () => toCanonicalRequest(JSON.parse(body)));
report("schema check + canonical request", convert.map((c, k) => c - parse[k]));

const last: Turn = primed.rollout.turns.at(-1)!;
report("promptIds (a view of the chain's ids)", await rounds(200, () => promptIds(last)));
report(
  "the same ids as a JS array pushed id by id (before issue 20)",
  await rounds(200, () => {
    const chain: Turn[] = [];
    for (let t: Turn | null = last; t; t = t.parent) chain.push(t);
    const ids: number[] = [];
    for (const t of chain.reverse()) {
      for (
        const part of t === last
          ? [t.bridgeIds, t.deltaIds]
          : [t.bridgeIds, t.deltaIds, t.outputIds]
      ) {
        for (let k = 0; k < part.length; k++) ids.push(part[k]);
      }
    }
    return ids;
  }),
);

// Over a socket: the handler reads the body as the gateway does; the client's CPU is the same
// in both rows, so the difference is the read.
let chunked = false;
const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
  const read = chunked ? new Request(req.url, { method: "POST", body: req.body }) : req;
  await readJsonBody(read, DEFAULT_MAX_BODY_BYTES);
  return new Response("ok");
});
const url = `http://127.0.0.1:${server.addr.port}/`;
const post = async () => await (await fetch(url, { method: "POST", body })).text();
report("readJsonBody over a socket, length declared (server + client)", await rounds(100, post));
chunked = true;
report(
  "readJsonBody over a socket, read chunk by chunk (server + client)",
  await rounds(100, post),
);
await server.shutdown();
