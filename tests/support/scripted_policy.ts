/**
 * TEST DOUBLE at the model boundary: a scripted policy that plays the trainer. It long-polls the
 * gateway's trainer API over HTTP, decides a reply from the decoded prompt, and completes the
 * request with real Qwen3 token ids (the reply text tokenized with the real tokenizer) and
 * logprobs of its own deterministic distribution.
 *
 * @module
 */
import { PolicyModel } from "../../model/mod.ts";
import { scriptedLogprob } from "../../runner/mod.ts";
import { postJson, trainerLoop } from "./trainer_loop.ts";

export { pythonJson } from "../../model/mod.ts";
export { answerText, scriptedLogprob, toolCallText } from "../../runner/mod.ts";

/** What the policy decides to say for one prompt: the raw text the model would sample. */
export type Script = (prompt: { text: string; ids: number[]; turn: number }) => string;

export interface PolicyRecord {
  request_id: string;
  rollout_id: string;
  prompt_ids: number[];
  output_ids: number[];
  logprobs: number[];
  sampling: Record<string, unknown>;
}

let shared: Promise<PolicyModel> | undefined;
/** One tokenizer for all tests in a process. */
export function sharedModel(): Promise<PolicyModel> {
  return shared ??= PolicyModel.load();
}

export class ScriptedPolicy {
  readonly records: PolicyRecord[] = [];
  #loop?: Promise<void>;
  #abort = new AbortController();

  constructor(
    readonly gatewayUrl: string,
    readonly script: Script,
    readonly options: {
      rollout?: string;
      adminToken?: string;
      /** Stream the reply to the agent in chunks of this many ids (`append`) before completing. */
      appendChunk?: number;
    } = {},
  ) {}

  start(): this {
    this.#loop = this.#run();
    return this;
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#loop?.catch(() => {});
  }

  async #run(): Promise<void> {
    const model = await sharedModel();
    const headers: Record<string, string> = this.options.adminToken
      ? { authorization: `Bearer ${this.options.adminToken}` }
      : {};
    await trainerLoop({
      gatewayUrl: this.gatewayUrl,
      rollout: this.options.rollout,
      headers,
      signal: this.#abort.signal,
      handle: async (req) => {
        const text = await model.decode(req.prompt_ids);
        const reply = this.script({ text, ids: req.prompt_ids, turn: this.records.length });
        const output_ids = await model.tokenizer.encode(reply);
        const logprobs = output_ids.map((_, i) => scriptedLogprob(i));
        const base = `${this.gatewayUrl}/api/requests/${req.request_id}`;
        const chunk = this.options.appendChunk ?? 0;
        for (let i = 0; chunk > 0 && i < output_ids.length; i += chunk) {
          await postJson(`${base}/append`, { output_ids: output_ids.slice(i, i + chunk) }, headers);
        }
        await postJson(
          `${base}/complete`,
          { output_ids, logprobs, finish_reason: "stop" },
          headers,
        );
        this.records.push({ ...req, output_ids, logprobs });
      },
    });
  }
}
