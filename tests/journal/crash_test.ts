/**
 * A crash loses nothing, with a real gateway process killed with SIGKILL over real sockets:
 * 200 rollouts × 10 turns while the gateway is killed (`kill -9`) at least three times at random
 * moments and started again on the same data directory. Agents retry their request when the
 * connection breaks (as the CLIs do), trainer workers long-poll, acknowledge and complete, and a
 * trainer reads `/api/samples/stream` with a cursor, reconnecting after each crash. Afterwards:
 * every rollout finished with exactly its 10 turns on one chain (nothing lost, nothing recorded
 * twice), and every sample reached the stream reader exactly once.
 *
 * @module
 */
import assert from "node:assert/strict";
import { type GatewayProcess, startGateway } from "../support/gateway_process.ts";
import { within } from "../support/within.ts";

const ROLLOUTS = 200;
const TURNS = 10;
const KILLS = 3;
const HELLO = [9707, 151645]; // "Hello<|im_end|>"
/** Every wait ends: one HTTP call (a chat turn waits for a trainer worker), and the whole run. */
const CALL_MS = 30_000;
const RUN_MS = 8 * 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One HTTP call; `null` when the connection failed (the gateway is down or was killed) or the
 * gateway is still starting.
 */
async function attempt(
  url: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
  // deno-lint-ignore no-explicit-any
): Promise<{ status: number; json: any } | null> {
  try {
    const res = await fetch(url, {
      method: init.method ?? "GET",
      headers: { "content-type": "application/json", ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: AbortSignal.timeout(CALL_MS),
    });
    const text = await res.text();
    const json = text ? JSON.parse(text) : null;
    // A restarted gateway listens before it has restored its journal: like down, try again.
    if (res.status === 503 && json?.error?.type === "unavailable") return null;
    return { status: res.status, json };
  } catch {
    return null;
  }
}

Deno.test("kill -9: 200 rollouts × 10 turns across ≥3 crashes: nothing lost, nothing twice, every sample streamed once", async () => {
  const gw: GatewayProcess = await startGateway();
  const stop = new AbortController();
  let answered = 0;
  let finished = 0;
  let kills = 0;
  const deadline = Date.now() + RUN_MS;
  /** Every retry loop asks this: past the run's deadline it stops, and the test fails. */
  const inTime = (what: string) => {
    if (Date.now() > deadline) throw new Error(`${what}: still going after ${RUN_MS} ms`);
  };
  const progress = () =>
    `${answered} answered, ${finished} finished, ${kills} kills; gateway said:\n${
      gw.output().slice(-2000)
    }`;
  try {
    const rollouts: { id: string; token: string }[] = [];
    for (let i = 0; i < ROLLOUTS; i++) {
      const r = await attempt(`${gw.url}/api/rollouts`, { method: "POST", body: { id: `k${i}` } });
      assert.equal(r?.status, 201);
      rollouts.push(r!.json);
    }

    // Agents: one request at a time; a broken connection or a 5xx/429 is retried as is.
    const agent = async ({ id, token }: { id: string; token: string }, n: number) => {
      const messages: { role: string; content: string }[] = [];
      for (let k = 0; k < TURNS; k++) {
        messages.push({ role: "user", content: `rollout ${id} step ${k}` });
        for (;;) {
          inTime(`${id} step ${k}`);
          const r = await attempt(`${gw.url}/rollout/${id}/v1/chat/completions`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}` },
            body: { model: "m", messages },
          });
          if (r?.status === 200) {
            messages.push({ role: "assistant", content: r.json.choices[0].message.content });
            answered++;
            break;
          }
          if (r && r.status < 429) throw new Error(`${id} step ${k}: ${JSON.stringify(r.json)}`);
          await sleep(100 + Math.random() * 200);
        }
      }
      for (;;) {
        inTime(`finish ${id}`);
        const r = await attempt(`${gw.url}/api/rollouts/${id}/finish`, {
          method: "POST",
          body: { reward: n },
        });
        if (r?.status === 200 || r?.status === 409) break; // 409: it landed before a crash
        if (r) throw new Error(`finish ${id}: ${JSON.stringify(r.json)}`);
        await sleep(200);
      }
      finished++;
    };

    // Trainer workers: long poll, acknowledge, complete; whatever a crash cut off comes again.
    const worker = async () => {
      while (!stop.signal.aborted) {
        const next = await attempt(`${gw.url}/api/requests/next?wait=1`);
        if (!next) {
          await sleep(100);
          continue;
        }
        if (next.status !== 200) continue;
        const rid = next.json.request_id;
        await attempt(`${gw.url}/api/requests/${rid}/ack`, { method: "POST" });
        await attempt(`${gw.url}/api/requests/${rid}/complete`, {
          method: "POST",
          body: { output_ids: HELLO, logprobs: [-0.5, -0.25], finish_reason: "stop" },
        });
      }
    };

    // A trainer reading the sample stream with its cursor, reconnecting after every break.
    const streamed: { cursor: number; rollout_id: string; loss: number }[] = [];
    const reader = async () => {
      let cursor = 0;
      while (!stop.signal.aborted) {
        try {
          // Bounded by `stop` (aborted at the end, or when the run fails) and by each crash.
          const res = await fetch(`${gw.url}/api/samples/stream?after=${cursor}`, {
            signal: stop.signal,
          });
          if (!res.ok) { // still starting after a restart
            await res.body?.cancel();
            throw new Error(`stream: ${res.status}`);
          }
          let pending = "";
          for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) {
            pending += chunk;
            const lines = pending.split("\n");
            pending = lines.pop()!;
            for (const line of lines.filter(Boolean)) {
              const s = JSON.parse(line);
              streamed.push({
                cursor: s.cursor,
                rollout_id: s.rollout_id,
                loss: s.loss_mask.reduce((a: number, b: number) => a + b, 0),
              });
              cursor = s.cursor;
            }
          }
        } catch { /* the gateway died; reconnect from the cursor */ }
        await sleep(100);
      }
    };

    // The killer: kill -9 at random moments spread over the run, then start it again.
    const killer = async () => {
      const marks = [0.2, 0.45, 0.7].map((f) => f * ROLLOUTS * TURNS);
      for (const mark of marks) {
        while (answered < mark && finished < ROLLOUTS) {
          inTime("the killer's wait");
          await sleep(20);
        }
        if (finished === ROLLOUTS) break;
        await sleep(Math.random() * 700);
        await gw.kill("SIGKILL");
        kills++;
        await gw.restart();
      }
      // One more while rollouts are finishing (their samples being written).
      while (finished < ROLLOUTS / 2) {
        inTime("the killer's last wait");
        await sleep(20);
      }
      if (finished < ROLLOUTS) {
        await gw.kill("SIGKILL");
        kills++;
        await gw.restart();
      }
    };

    const workers = Array.from({ length: 6 }, worker);
    const streaming = reader();
    const killing = killer();
    await within(
      "200 rollouts × 10 turns with kill -9",
      RUN_MS + CALL_MS,
      Promise.all([...rollouts.map((r, n) => agent(r, n)), killing]),
      progress,
    );
    for (let i = 0; i < 600 && streamed.length < ROLLOUTS; i++) await sleep(100);
    await sleep(500); // a duplicate would arrive now
    stop.abort();
    await within(
      "trainer workers and the stream reader stop",
      CALL_MS + 5_000,
      Promise.all([...workers, streaming]),
      progress,
    );

    assert.ok(kills >= KILLS, `killed ${kills} times`);
    assert.equal(answered, ROLLOUTS * TURNS, "every agent got every answer");
    for (const { id } of rollouts) {
      const info = await attempt(`${gw.url}/api/rollouts/${id}`);
      assert.equal(info?.json.status, "finished", id);
      assert.equal(info?.json.turns.done, TURNS, `${id}: ${JSON.stringify(info?.json.turns)}`);
      const samples = (await attempt(`${gw.url}/api/rollouts/${id}/samples`))!.json.samples;
      assert.equal(samples.length, 1, `${id}: one chain, no duplicated turn`);
      assert.equal(samples[0].turns.length, TURNS, id);
      assert.equal(
        samples[0].loss_mask.reduce((a: number, b: number) => a + b, 0),
        TURNS * HELLO.length,
        `${id}: every sampled id trained once`,
      );
    }
    const ids = streamed.map((s) => s.rollout_id);
    assert.equal(new Set(ids).size, ids.length, "no sample streamed twice");
    assert.deepEqual([...ids].sort(), rollouts.map((r) => r.id).sort(), "every sample streamed");
    assert.ok(streamed.every((s, i) => i === 0 || s.cursor > streamed[i - 1].cursor));
    assert.ok(streamed.every((s) => s.loss === TURNS * HELLO.length));
    // The crashes caught requests in flight (a typical run: ~200 back in the queue each time).
    const requeued = [
      ...gw.output().matchAll(/restored 200 rollout\(s\), \d+ turn\(s\), (\d+) request/g),
    ]
      .map((m) => Number(m[1]));
    assert.ok(requeued.length >= KILLS && requeued.some((n) => n > 0), gw.output());
  } finally {
    stop.abort();
    await gw.stop();
  }
});
