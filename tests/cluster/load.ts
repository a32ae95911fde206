/**
 * The load the replicated gateway is held to, driven over HTTP against one URL (a gateway, or
 * HAProxy in front of replicas): rollouts × turns of agents that each send one request at a time,
 * retry 5% of their requests as the CLIs do after a dropped connection (the first attempt is cut
 * off), and retry any 5xx, 429 or broken connection; trainer workers long-poll, acknowledge and
 * complete with a scripted policy (TEST DOUBLE at the model boundary: its ids are a function of
 * the prompt, so two runs that build the same prompts produce the same samples); each rollout is
 * finished with a reward. Returns every rollout's samples from its finish.
 *
 * @module
 */
import { scriptedLogprob } from "../../runner/mod.ts";
import { call, type Json, sleep } from "./replicas.ts";

export interface LoadOptions {
  url: string;
  rollouts: number;
  turns: number;
  /** Trainer workers (each long-polls through `url`). */
  workers?: number;
  /** Called with the number of answered turns after each answer (a chaos hook). */
  onAnswer?: (answered: number) => void;
  /** The whole run's deadline. */
  runMs?: number;
}

export interface LoadResult {
  /** The samples each rollout's finish returned, by rollout id. */
  samples: Map<string, Json[]>;
  answered: number;
  /** Requests sent a second time after a cut connection. */
  retried: number;
  /** Agent calls answered 5xx, 429 or not at all (retried). */
  failedCalls: number;
}

const END = 151645; // <|im_end|>
/** Digit tokens of Qwen3's vocabulary ("0" is 15). */
const DIGIT = 15;

/** The scripted policy: a number decided by the prompt, written as digit tokens. */
export function scriptedReply(prompt: readonly number[]): number[] {
  const n = (prompt.length * 7919 + prompt[prompt.length - 4] * 31) % 100_000;
  return [...String(n)].map((d) => DIGIT + Number(d)).concat(END);
}

/** 5% of (rollout, step) pairs, the same in every run. */
const retries = (i: number, k: number) => (i * 31 + k * 17) % 20 === 0;

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const deadline = Date.now() + (o.runMs ?? 240_000);
  const result: LoadResult = { samples: new Map(), answered: 0, retried: 0, failedCalls: 0 };
  const stop = new AbortController();
  const inTime = (what: string) => {
    if (Date.now() > deadline) throw new Error(`${what}: still going at the run's deadline`);
  };
  const worker = async () => {
    while (!stop.signal.aborted) {
      const next = await call(`${o.url}/api/requests/next?wait=1`, { timeoutMs: 10_000 });
      if (next.status !== 200) {
        if (next.status !== 204) await sleep(100);
        continue;
      }
      const { request_id: rid, prompt_ids: prompt } = next.json;
      await call(`${o.url}/api/requests/${rid}/ack`, { body: {} });
      const output_ids = scriptedReply(prompt);
      await call(`${o.url}/api/requests/${rid}/complete`, {
        body: {
          output_ids,
          logprobs: output_ids.map((_, i) => scriptedLogprob(i)),
          finish_reason: "stop",
        },
      });
    }
  };
  const agent = async (i: number) => {
    const id = `L${i}`;
    let created;
    do {
      inTime(`create ${id}`);
      created = await call(`${o.url}/api/rollouts`, { body: { id } });
    } while (created.status >= 500 || created.status === 0);
    if (created.status !== 201) throw new Error(`create ${id}: ${JSON.stringify(created.json)}`);
    const headers = { authorization: `Bearer ${created.json.token}` };
    const messages: { role: string; content: string }[] = [];
    for (let k = 0; k < o.turns; k++) {
      messages.push({ role: "user", content: `rollout ${id} step ${k}` });
      const body = { model: "m", messages };
      if (retries(i, k)) {
        // The first attempt's connection is cut (the agent's retry follows).
        await call(`${o.url}/rollout/${id}/v1/chat/completions`, {
          headers,
          body,
          timeoutMs: 5 + (i % 40),
        });
        result.retried++;
      }
      for (;;) {
        inTime(`${id} step ${k}`);
        const r = await call(`${o.url}/rollout/${id}/v1/chat/completions`, { headers, body });
        if (r.status === 200) {
          messages.push({ role: "assistant", content: r.json.choices[0].message.content });
          o.onAnswer?.(++result.answered);
          break;
        }
        if (r.status !== 0 && r.status < 500 && r.status !== 429) {
          throw new Error(`${id} step ${k}: ${r.status} ${JSON.stringify(r.json)}`);
        }
        result.failedCalls++;
        await sleep(100 + Math.random() * 200);
      }
    }
    for (;;) {
      inTime(`finish ${id}`);
      const r = await call(`${o.url}/api/rollouts/${id}/finish`, { body: { reward: i % 2 } });
      if (r.status === 200) {
        result.samples.set(id, r.json.samples);
        return;
      }
      if (r.status === 409) { // finished before its answer was lost (a replica died)
        const kept = await call(`${o.url}/api/rollouts/${id}/samples`);
        if (kept.status === 200) {
          result.samples.set(id, kept.json.samples);
          return;
        }
      }
      if (r.status !== 0 && r.status < 500) {
        throw new Error(`finish ${id}: ${r.status} ${JSON.stringify(r.json)}`);
      }
      await sleep(200);
    }
  };
  const workers = Array.from({ length: o.workers ?? 8 }, worker);
  try {
    await Promise.all(Array.from({ length: o.rollouts }, (_, i) => agent(i)));
  } finally {
    stop.abort();
    await Promise.all(workers);
  }
  return result;
}

/** What of a sample two runs must agree on (turn ids and times differ by design). */
export function sampleCore(s: Json) {
  return {
    index: s.index,
    input_ids: s.input_ids,
    loss_mask: s.loss_mask,
    logprobs: s.logprobs,
    trained_from: s.trained_from,
    reward: s.reward,
    label: s.label ?? s.metadata?.label,
    turns: s.turns.length,
  };
}
