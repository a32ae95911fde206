/**
 * TEST DOUBLE at the model boundary, for end-to-end runs that need more than
 * `ScriptedPolicy`: the same trainer-side loop over the gateway's HTTP API (long-poll
 * `/api/requests/next`, decode the prompt, tokenize the scripted reply with the real Qwen3
 * tokenizer, complete with deterministic logprobs), but a script may also make the policy *fail*
 * a request (`POST /api/requests/:id/fail`), and every request is recorded with its decoded
 * prompt and what the double did with it.
 *
 * @module
 */
import { scriptedLogprob, sharedModel } from "../support/scripted_policy.ts";
import { postJson, trainerLoop } from "../support/trainer_loop.ts";

/** What the double does with one request: sample a text, or fail it with an HTTP status. */
export type Reply = string | { fail: { status: number; error: string } };

export type GateScript = (prompt: { text: string; ids: number[]; index: number }) => Reply;

export interface GateRecord {
  request_id: string;
  turn_id: string;
  prompt_ids: number[];
  /** The decoded prompt. */
  text: string;
  /** Empty for a failed request. */
  output_ids: number[];
  logprobs: number[];
  /** Set when the double failed the request. */
  failed?: { status: number; error: string };
}

export class GatePolicyTestDouble {
  readonly records: GateRecord[] = [];
  #stopped = false;
  #loop?: Promise<void>;
  #abort = new AbortController();
  #error: unknown;

  constructor(
    readonly gatewayUrl: string,
    public script: GateScript,
    readonly rollout?: string,
  ) {}

  start(): this {
    this.#loop = this.#run().catch((e) => {
      if (!this.#stopped) this.#error = e;
    });
    return this;
  }

  /** Stops polling; rethrows an error the loop ran into (other than being stopped). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort();
    await this.#loop;
    if (this.#error) throw this.#error;
  }

  async #run(): Promise<void> {
    const model = await sharedModel();
    const base = `${this.gatewayUrl}/api/requests`;
    await trainerLoop({
      gatewayUrl: this.gatewayUrl,
      rollout: this.rollout,
      signal: this.#abort.signal,
      handle: async (req) => {
        const text = await model.decode(req.prompt_ids);
        const reply = this.script({ text, ids: req.prompt_ids, index: this.records.length });
        const record: GateRecord = {
          request_id: req.request_id,
          turn_id: req.turn_id,
          prompt_ids: req.prompt_ids,
          text,
          output_ids: [],
          logprobs: [],
        };
        if (typeof reply !== "string") {
          record.failed = reply.fail;
          this.records.push(record);
          await postJson(`${base}/${req.request_id}/fail`, reply.fail);
          return;
        }
        record.output_ids = await model.tokenizer.encode(reply);
        record.logprobs = record.output_ids.map((_, i) => scriptedLogprob(i));
        this.records.push(record);
        await postJson(`${base}/${req.request_id}/complete`, {
          output_ids: record.output_ids,
          logprobs: record.logprobs,
          finish_reason: "stop",
        });
      },
    });
  }
}
