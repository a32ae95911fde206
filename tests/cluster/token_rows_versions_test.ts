/**
 * Replicas keep what one gateway keeps: a trainer's `routed_experts` and a weight version per
 * appended chunk, sent to replicas other than the rollout's owner, reach the owner's recorded
 * turns; the samples read through yet another replica (flat, `?form=tree`, the sample stream)
 * equal, byte for byte, those of one gateway with its SQLite journal running the same script,
 * and again after the owner was killed and another replica took its rollouts over. Bad rows get
 * the same 400 on both and change nothing. Real PostgreSQL, HAProxy and gateway processes; the
 * trainer is a scripted policy (TEST DOUBLE at the model boundary).
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import postgres from "postgres";
import { startGateway } from "../support/gateway_process.ts";
import { haproxyMissing, startHaproxy } from "../support/haproxy.ts";
import { postgresMissing, startPostgres } from "../support/postgres_server.ts";
import { skipGroup } from "../support/skips.ts";
import { scriptedReply } from "./load.ts";
import { call, type Json, sleep, startReplicas } from "./replicas.ts";

const ROLLOUTS = ["kept-a", "kept-b"];
const TURNS = 3;

const ignore = skipGroup(
  "replicated gateway behind HAProxy",
  postgresMissing() ?? haproxyMissing(),
);

/** Where each call of the script goes. */
interface Route {
  /** Creates the rollouts (their owner). */
  create: string;
  agent: string;
  next: string;
  /** Appends go to these in turn. */
  append: string[];
  complete: string;
  read: string;
}

/** Routing of positions `from … seq.length − 2`: two layers, top-2, a function of the ids. */
function routing(seq: readonly number[], from: number, dtype = "uint8") {
  const rows = Math.max(0, seq.length - 1 - from);
  const bytes = new Uint8Array(rows * 4);
  for (let r = 0; r < rows; r++) {
    for (let j = 0; j < 4; j++) bytes[r * 4 + j] = (seq[from + r] + 13 * j + from + r) % 256;
  }
  return { dtype, shape: [rows, 2, 2], data: Buffer.from(bytes).toString("base64") };
}

/** Chunks and weight versions per turn: a version change inside a turn, none, one repeated. */
const CHUNKS: [number, number, number][][] = [[[0, 2, 1], [2, 4, 2]], [], [[0, 1, 3], [1, 3, 3]]];
const FINAL_VERSION = [2, 3, 4];

/** Runs the script; returns what the bad completions got (status and message). */
async function runScript(u: Route): Promise<string[]> {
  const refusals: string[] = [];
  for (const id of ROLLOUTS) {
    const created = await call(`${u.create}/api/rollouts`, { body: { id } });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const headers = { authorization: `Bearer ${created.json.token}` };
    const messages: { role: string; content: string }[] = [];
    for (let k = 0; k < TURNS; k++) {
      messages.push({ role: "user", content: `${id} step ${k}` });
      const answer = call(`${u.agent}/rollout/${id}/v1/chat/completions`, {
        headers,
        body: { model: "m", messages },
      });
      const next = await call(`${u.next}/api/requests/next?wait=10&rollout=${id}`);
      assert.equal(next.status, 200, JSON.stringify(next.json));
      const { request_id: rid, prompt_ids: prompt, routed_experts_from: from } = next.json;
      assert.equal((await call(`${u.next}/api/requests/${rid}/ack`, { body: {} })).status, 200);
      const output = scriptedReply(prompt);
      for (const [i, [a, b, version]] of CHUNKS[k].entries()) {
        const appended = await call(`${u.append[i % u.append.length]}/api/requests/${rid}/append`, {
          body: { output_ids: output.slice(a, b), weight_version: version },
        });
        assert.equal(appended.status, 200, JSON.stringify(appended.json));
      }
      const seq = [...prompt, ...output];
      const body = { output_ids: output, finish_reason: "stop", weight_version: FINAL_VERSION[k] };
      // Refused, changing nothing: one row short; on a chain with rows, another dtype.
      const bad = [routing(seq.slice(0, -1), from)];
      if (from > 0) bad.push({ ...routing(seq, from), dtype: "uint16" });
      for (const routed_experts of bad) {
        const r = await call(`${u.complete}/api/requests/${rid}/complete`, {
          body: { ...body, routed_experts },
        });
        refusals.push(`${r.status} ${r.json?.error?.message}`);
      }
      const done = await call(`${u.complete}/api/requests/${rid}/complete`, {
        body: { ...body, routed_experts: routing(seq, from) },
      });
      assert.equal(done.status, 200, JSON.stringify(done.json));
      const answered = await answer;
      assert.equal(answered.status, 200, JSON.stringify(answered.json));
      messages.push({ role: "assistant", content: answered.json.choices[0].message.content });
    }
    const finished = await call(`${u.read}/api/rollouts/${id}/finish`, { body: { reward: 1 } });
    assert.equal(finished.status, 200, JSON.stringify(finished.json));
  }
  return refusals;
}

/** What two gateways must agree on: everything but turn ids' random part and times. */
function comparable(value: Json): string {
  return JSON.stringify(value, (key, v) => {
    if (/(^|_)(at|ms)$|timings|created|finished_at/.test(key)) return undefined;
    return typeof v === "string" ? v.replace(/\.(\d+)\.[0-9a-f]{8}$/, ".$1") : v;
  });
}

/** Each rollout's samples, flat and as a tree, read through `url`. */
async function readSamples(url: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const id of ROLLOUTS) {
    for (const form of ["flat", "tree"]) {
      const r = await call(`${url}/api/rollouts/${id}/samples?form=${form}`);
      assert.equal(r.status, 200, JSON.stringify(r.json));
      out.set(`${id} ${form}`, comparable(r.json));
    }
  }
  return out;
}

/** The sample stream's first `n` lines (cursor order). */
async function streamed(url: string, n: number): Promise<string[]> {
  const res = await fetch(`${url}/api/samples/stream?after=0`);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (text.split("\n").length <= n) text += (await reader.read()).value ?? "";
  await reader.cancel();
  return text.split("\n").filter(Boolean).map((l) => comparable(JSON.parse(l)));
}

Deno.test({
  name:
    "cluster: routed_experts and per-chunk weight versions sent to other replicas reach the samples, equal to one SQLite gateway's, also after a takeover",
  ignore,
  async fn() {
    const single = await startGateway();
    let reference, refusedOne, streamOne;
    try {
      const u = single.url;
      refusedOne = await runScript({
        create: u,
        agent: u,
        next: u,
        append: [u],
        complete: u,
        read: u,
      });
      reference = await readSamples(u);
      streamOne = await streamed(u, ROLLOUTS.length);
    } finally {
      await single.stop();
    }
    // The script's samples carry rows and version spans (else the comparison proves little).
    assert.match(reference.get("kept-a flat")!, /"routed_experts":\{"dtype":"uint8"/);
    assert.match(reference.get("kept-a flat")!, /"weight_version"/);

    const pg = await startPostgres();
    const replicas = await startReplicas(3, pg.url);
    const [a, b, c] = replicas;
    const lb = await startHaproxy(replicas.map((r) => `127.0.0.1:${r.port}`));
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      // `a` owns the rollouts; the trainer talks to `b` and `c`, the agent to the balancer.
      const refused = await runScript({
        create: a.url,
        agent: lb.url,
        next: b.url,
        append: [c.url, b.url],
        complete: c.url,
        read: b.url,
      });
      assert.deepEqual(refused, refusedOne);
      assert.ok(refused.every((r) => r.startsWith("400 ") && /routed_experts/.test(r)));
      const [{ n }] = await sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM events WHERE kind = 'request_completed'`;
      assert.equal(n, ROLLOUTS.length * TURNS, "a refused completion writes nothing");
      const [stored] = await sql<{ turns: number; carried: number }[]>`
        SELECT (SELECT count(*)::int FROM token_rows) AS turns,
          (SELECT count(*)::int FROM pending WHERE routed_experts IS NOT NULL) AS carried`;
      assert.deepEqual(stored, { turns: ROLLOUTS.length * TURNS, carried: 0 });

      assert.deepEqual(await readSamples(c.url), reference);
      assert.deepEqual(await streamed(lb.url, ROLLOUTS.length), streamOne);

      // The owner dies: another replica takes the rollouts over and reads the rows back.
      await a.kill("SIGKILL");
      let after: Map<string, string> | undefined;
      for (const deadline = Date.now() + 20_000; !after;) {
        const r = await call(`${b.url}/api/rollouts/${ROLLOUTS[0]}/samples`);
        if (r.status === 200) after = await readSamples(b.url);
        else if (Date.now() > deadline) assert.fail(`no takeover: ${JSON.stringify(r.json)}`);
        else await sleep(200);
      }
      assert.deepEqual(after, reference);
    } finally {
      await sql.end();
      await lb.stop();
      for (const r of replicas) await r.stop();
      await pg.stop();
    }
  },
});
