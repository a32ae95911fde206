/**
 * The real Gemini CLI waiting on a slow trainer: the Google SDK's stream parser reads `data:` lines
 * from the first byte and takes an SSE comment for the end of what it can parse, so the gateway
 * keeps a Gemini stream open with empty response chunks instead of `: keep-alive` comments. Here
 * the gateway sends one every 100 ms and the scripted policy (TEST DOUBLE) thinks 1.5 s before
 * each answer, then streams it in chunks: the CLI must run the shell command and report the
 * answer with a dozen keep-alives ahead of each answer.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createGateway } from "../../gateway/mod.ts";
import { describeRun, geminiCli, runLocal } from "../../harness/mod.ts";
import { ScriptedPolicy, sharedModel } from "../support/scripted_policy.ts";
import { cliMissing, skipGroup } from "../support/skips.ts";
import {
  FILE_NAME,
  FILE_TEXT,
  FINAL_TEXT,
  makeWorkdir,
  MODEL_ID,
  PROMPT,
  RUN_BUDGET_MS,
  scenarioScript,
} from "./cli_scenario.ts";

const KEEP_ALIVE_MS = 100;
const THINK_MS = 1_500;
const missing = cliMissing(geminiCli);

Deno.test({
  name: "e2e gemini-cli: a slow trainer, the stream kept open with empty chunks" +
    (missing ? ` [skipped: ${missing}]` : ""),
  ignore: skipGroup("e2e gemini-cli", missing),
}, async () => {
  const model = await sharedModel();
  const gw = createGateway({ model, keepAliveMs: KEEP_ALIVE_MS });
  const streams: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const res = await gw.app.fetch(req);
    if (!res.headers.get("content-type")?.startsWith("text/event-stream")) return res;
    // Keep a copy of every stream the CLI reads.
    const [mine, theirs] = res.body!.tee();
    const i = streams.push("") - 1;
    (async () => {
      for await (const t of mine.pipeThrough(new TextDecoderStream())) streams[i] += t;
    })();
    return new Response(theirs, { status: res.status, headers: res.headers });
  });
  const url = `http://127.0.0.1:${server.addr.port}`;
  const tmp = await Deno.makeTempDir({ prefix: "rollgate-e2e-gemini-keepalive-" });
  const script = scenarioScript(geminiCli);
  const policy = new ScriptedPolicy(url, async (prompt) => {
    await new Promise((r) => setTimeout(r, THINK_MS));
    return script(prompt);
  }, { appendChunk: 40 });
  try {
    const created = await fetch(`${url}/api/rollouts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    const rollout = await created.json();
    assert.equal(created.status, 201, JSON.stringify(rollout));
    policy.start();
    await makeWorkdir(`${tmp}/work`);
    const run = await runLocal(geminiCli, PROMPT, {
      gatewayUrl: url,
      rolloutId: rollout.id,
      token: rollout.token,
      model: MODEL_ID,
      workdir: `${tmp}/work`,
      home: `${tmp}/home`,
    }, { timeoutMs: RUN_BUDGET_MS });
    assert.ok(run.completion.ok, describeRun(run));
    assert.equal(run.completion.finalText?.trim(), FINAL_TEXT);
    assert.equal(await Deno.readTextFile(`${tmp}/work/${FILE_NAME}`), `${FILE_TEXT}\n`);
    assert.equal(policy.records.length, 2);
    assert.equal(streams.length, 2);
    for (const s of streams) {
      assert.ok(s.startsWith("data: "), "no comment before the first chunk");
      assert.ok(!s.includes("\n:") && !s.startsWith(":"), "no SSE comment at all");
      const keepAlives = s.split("data: {}\n\n").length - 1;
      assert.ok(keepAlives >= 5, `keep-alives in the stream: ${keepAlives}`);
    }
  } finally {
    await policy.stop();
    for (const r of gw.store.list()) gw.gate.cancelRollout(r.id, "test over");
    await server.shutdown();
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
});
