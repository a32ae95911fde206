/**
 * Agents on the official SDKs with their default retries (`openai` and `@anthropic-ai/sdk`, each
 * streaming and not: four kinds, in turn), against one URL (HAProxy in front of replicas): each
 * rollout is created, answers `turns` calls in one growing conversation, and is finished. Every
 * call the SDK gives up on is a failure (counted, then the agent sends it again, so the run
 * still ends and its data can be checked); the trainers are separate processes
 * (`trainer_worker.py`). Also the check that what was recorded is exactly what the scripted
 * policy sampled, once: every turn's output in its rollout's one sample is `scriptedReply` of the
 * ids before it and carries loss there and nowhere else.
 *
 * @module
 */
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { scriptedReply } from "./load.ts";
import { call, type Json, sleep } from "./replicas.ts";

export const KINDS = ["openai stream", "openai", "anthropic stream", "anthropic"] as const;

export interface SdkRun {
  /** Calls an SDK gave up on (after its own retries), with why. */
  failures: string[];
  /** When each failed (ms since the epoch). */
  failedAt: number[];
  /** Each rollout's answer times (ms since the epoch), in order. */
  answers: Map<string, number[]>;
  /** The sample each rollout's finish returned. */
  samples: Map<string, Json>;
}

/** What a call had received when it broke (diagnostics). */
interface Seen {
  text: string;
  headers: string;
}

async function ask(
  kind: typeof KINDS[number],
  base: string,
  token: string,
  history: Json[],
  seen: Seen,
) {
  if (kind.startsWith("openai")) {
    const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: token });
    const messages = history as OpenAI.Chat.ChatCompletionMessageParam[];
    if (kind === "openai") {
      const r = await client.chat.completions.create({ model: "policy", messages });
      return r.choices[0].message.content ?? "";
    }
    let text = "";
    const { data: stream, response } = await client.chat.completions.create({
      model: "policy",
      messages,
      stream: true,
    }).withResponse();
    seen.headers = JSON.stringify([...response.headers]);
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? "";
      seen.text = text;
    }
    return text;
  }
  const client = new Anthropic({ baseURL: base, apiKey: token });
  const messages = history as Anthropic.MessageParam[];
  if (kind === "anthropic") {
    const r = await client.messages.create({ model: "policy", max_tokens: 64, messages });
    return r.content.map((b) => b.type === "text" ? b.text : "").join("");
  }
  let text = "";
  const { data: stream, response } = await client.messages.create({
    model: "policy",
    max_tokens: 64,
    messages,
    stream: true,
  }).withResponse();
  seen.headers = JSON.stringify([...response.headers]);
  for await (const e of stream) {
    if (e.type === "content_block_delta" && e.delta.type === "text_delta") text += e.delta.text;
    seen.text = text;
  }
  return text;
}

/** Retries a trainer-API call through 5xx and broken connections (a replica died). */
async function trainerCall(url: string, body?: unknown) {
  for (let i = 0;; i++) {
    const r = await call(url, { body });
    if (r.status !== 0 && r.status < 500) return r;
    if (i > 100) throw new Error(`${url}: ${r.status} ${JSON.stringify(r.json)}`);
    await sleep(200);
  }
}

export async function runSdkAgents(o: {
  url: string;
  prefix: string;
  rollouts: number;
  turns: number;
  /** Called after every answer with how many there were (a chaos hook). */
  onAnswer?: (answered: number) => void;
}): Promise<SdkRun> {
  const run: SdkRun = { failures: [], failedAt: [], answers: new Map(), samples: new Map() };
  let answered = 0;
  const agent = async (i: number) => {
    const id = `${o.prefix}${i}`;
    const kind = KINDS[i % KINDS.length];
    const created = await trainerCall(`${o.url}/api/rollouts`, { id });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const base = `${o.url}/rollout/${id}`;
    const history: Json[] = [];
    const times: number[] = [];
    run.answers.set(id, times);
    for (let k = 0; k < o.turns; k++) {
      history.push({ role: "user", content: `rollout ${id} step ${k}` });
      for (;;) {
        const seen: Seen = { text: "", headers: "" };
        try {
          const text = await ask(kind, base, created.json.token, history, seen);
          history.push({ role: "assistant", content: text });
          times.push(Date.now());
          o.onAnswer?.(++answered);
          break;
        } catch (e) {
          run.failures.push(
            `${id} (${kind}) step ${k}: ${(e as Error).message} (had ${JSON.stringify(seen)})`,
          );
          run.failedAt.push(Date.now());
          await sleep(500);
        }
      }
    }
    const finished = await trainerCall(`${o.url}/api/rollouts/${id}/finish`, { reward: 1 });
    if (finished.status === 409) { // finished before its answer was lost with a replica
      const kept = await trainerCall(`${o.url}/api/rollouts/${id}/samples`);
      run.samples.set(id, kept.json.samples);
    } else {
      assert.equal(finished.status, 200, JSON.stringify(finished.json));
      run.samples.set(id, finished.json.samples);
    }
  };
  await Promise.all(Array.from({ length: o.rollouts }, (_, i) => agent(i)));
  return run;
}

/**
 * Every rollout has one sample of `turns` turns, each turn's output is the scripted policy's
 * reply to the ids before it, and loss is on exactly those outputs: nothing lost, nothing twice.
 */
export function checkSamples(run: SdkRun, turns: number): void {
  for (const [id, samples] of run.samples) {
    assert.equal(samples.length, 1, `${id}: ${samples.length} samples`);
    const [s] = samples;
    assert.equal(s.turn_spans.length, turns, `${id}: ${s.turn_spans.length} turns`);
    const expected = new Array(s.input_ids.length).fill(0);
    for (const span of s.turn_spans) {
      const output = s.input_ids.slice(span.output_start, span.end);
      assert.deepEqual(output, scriptedReply(s.input_ids.slice(0, span.output_start)), id);
      for (let p = span.output_start; p < span.end; p++) expected[p] = 1;
    }
    assert.deepEqual(s.loss_mask, expected, `${id}: loss exactly on the sampled outputs`);
  }
}

/** The trainers: the real Python client's `serve_requests`, one process each, through `url`. */
export function startTrainers(url: string, n: number, concurrency: number) {
  const script = new URL("./trainer_worker.py", import.meta.url).pathname;
  const procs = Array.from({ length: n }, () => {
    const child = new Deno.Command("python3", {
      args: [script, url, String(concurrency)],
      env: { ROLLGATE_CLIENT_TRANSPORT: "builtin" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    // Read as it comes: a trainer logging every failed poll must not block on a full pipe.
    const text = (s: ReadableStream<Uint8Array>) => new Response(s).text();
    return { child, out: text(child.stdout), err: text(child.stderr) };
  });
  let stopped: Promise<{ stats: Json; log: string }[]> | undefined;
  return {
    /** Stops them (their stdin closes); what each `serve_requests` reported, and its log. */
    stop(): Promise<{ stats: Json; log: string }[]> {
      return stopped ??= Promise.all(procs.map(async ({ child, out, err }) => {
        await child.stdin.close();
        await child.status;
        const stdout = (await out).trim();
        return { stats: stdout ? JSON.parse(stdout.split("\n").at(-1)!) : null, log: await err };
      }));
    },
  };
}
