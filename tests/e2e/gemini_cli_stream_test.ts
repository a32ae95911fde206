/**
 * The real Gemini CLI on a stream that stays silent, then either answers or fails. The Google SDK's
 * stream parser reads `data:` lines from the first byte and takes an SSE comment for the end of
 * what it can parse, so the gateway keeps a Gemini stream open with empty response chunks instead
 * of `: keep-alive` comments, and reports a failure once the stream has started as a bare JSON
 * error object, the form the SDK throws as the API error.
 *
 * - A slow trainer: the gateway sends a keep-alive every 100 ms and the scripted policy (TEST
 *   DOUBLE) thinks 1.5 s before each answer, then streams it in chunks: the CLI must run the shell
 *   command and report the answer with a dozen keep-alives ahead of each answer.
 * - A failing trainer: the first request is failed (503) after a few keep-alives: the CLI must end
 *   its run with the trainer's message (one attempt, as the plugin configures it).
 *
 * @module
 */
import assert from "node:assert/strict";
import { createGateway } from "../../gateway/mod.ts";
import { describeRun, geminiCli, runLocal, type RunResult } from "../../harness/mod.ts";
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

interface Served {
  url: string;
  rollout: { id: string; token: string };
  /** The text of every SSE stream the CLI read. */
  streams: string[];
  run(): Promise<RunResult>;
  workdir: string;
  close(): Promise<void>;
}

/** A gateway keeping streams alive every 100 ms, each stream copied, and one rollout. */
async function serve(): Promise<Served> {
  const model = await sharedModel();
  const gw = createGateway({ model, keepAliveMs: KEEP_ALIVE_MS });
  const streams: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const res = await gw.app.fetch(req);
    if (!res.headers.get("content-type")?.startsWith("text/event-stream")) return res;
    const [mine, theirs] = res.body!.tee();
    const i = streams.push("") - 1;
    (async () => {
      for await (const t of mine.pipeThrough(new TextDecoderStream())) streams[i] += t;
    })();
    return new Response(theirs, { status: res.status, headers: res.headers });
  });
  const url = `http://127.0.0.1:${server.addr.port}`;
  const tmp = await Deno.makeTempDir({ prefix: "rollgate-e2e-gemini-stream-" });
  const created = await fetch(`${url}/api/rollouts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  const rollout = await created.json();
  assert.equal(created.status, 201, JSON.stringify(rollout));
  const workdir = `${tmp}/work`;
  await makeWorkdir(workdir);
  return {
    url,
    rollout,
    streams,
    workdir,
    run: () =>
      runLocal(geminiCli, PROMPT, {
        gatewayUrl: url,
        rolloutId: rollout.id,
        token: rollout.token,
        model: MODEL_ID,
        workdir,
        home: `${tmp}/home`,
      }, { timeoutMs: RUN_BUDGET_MS }),
    async close() {
      gw.rollouts.abandon("test over");
      await server.shutdown();
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    },
  };
}

/** How many keep-alive chunks a stream holds, after checking it holds no SSE comment. */
function keepAlives(stream: string): number {
  assert.ok(stream.startsWith("data: "), "no comment before the first chunk");
  assert.ok(!stream.includes("\n:"), "no SSE comment at all");
  return stream.split("data: {}\n\n").length - 1;
}

Deno.test({
  name: "e2e gemini-cli: a slow trainer, the stream kept open with empty chunks" +
    (missing ? ` [skipped: ${missing}]` : ""),
  ignore: skipGroup("e2e gemini-cli", missing),
}, async () => {
  const s = await serve();
  const script = scenarioScript(geminiCli);
  const policy = new ScriptedPolicy(s.url, async (prompt) => {
    await new Promise((r) => setTimeout(r, THINK_MS));
    return script(prompt);
  }, { appendChunk: 40 });
  try {
    policy.start();
    const run = await s.run();
    assert.ok(run.completion.ok, describeRun(run));
    assert.equal(run.completion.finalText?.trim(), FINAL_TEXT);
    assert.equal(await Deno.readTextFile(`${s.workdir}/${FILE_NAME}`), `${FILE_TEXT}\n`);
    assert.equal(policy.records.length, 2);
    assert.equal(s.streams.length, 2);
    for (const stream of s.streams) {
      const n = keepAlives(stream);
      assert.ok(n >= 5, `keep-alives in the stream: ${n}`);
    }
  } finally {
    await policy.stop();
    await s.close();
  }
});

Deno.test({
  name: "e2e gemini-cli: a request failed after the stream started ends the run with its message" +
    (missing ? ` [skipped: ${missing}]` : ""),
  ignore: skipGroup("e2e gemini-cli", missing),
}, async () => {
  const s = await serve();
  const api = (path: string, body?: unknown) =>
    fetch(`${s.url}/api${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    }).then((r) => r.json());
  try {
    const running = s.run();
    const next = await api(`/requests/next?wait=30&rollout=${s.rollout.id}`);
    await new Promise((r) => setTimeout(r, 10 * KEEP_ALIVE_MS));
    const message = "the engine went away (test)";
    assert.deepEqual(
      await api(`/requests/${next.request_id}/fail`, { error: message, status: 503 }),
      {
        request_id: next.request_id,
        failed: true,
      },
    );
    const run = await running;
    assert.equal(run.completion.ok, false, describeRun(run));
    // (Its exit code after an in-stream API error is 247, not 1.)
    assert.notEqual(run.exitCode, 0, describeRun(run));
    assert.match(run.completion.error ?? "", /503/, describeRun(run));
    assert.ok(run.stdout.includes(message), describeRun(run));
    assert.equal(s.streams.length, 1, "one attempt");
    assert.ok(keepAlives(s.streams[0]) >= 3);
    assert.ok(
      s.streams[0].endsWith(
        `{"error":{"code":503,"message":"${message}","status":"UNAVAILABLE"}}\n\n`,
      ),
      s.streams[0],
    );
  } finally {
    await s.close();
  }
});
