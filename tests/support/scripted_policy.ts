/**
 * TEST DOUBLE at the model boundary: a scripted policy that plays the trainer. It long-polls the
 * gateway's trainer API over HTTP, decides a reply from the decoded prompt, and completes the
 * request with real token ids and logprobs of its own deterministic distribution. A reply is raw
 * text (tokenized with the real Qwen3 tokenizer) or an assistant message, which the policy's
 * model family writes (`renderAnswer`: the ids of that family's format).
 *
 * @module
 */
import type { AssistantMessage } from "../../canonical/mod.ts";
import { PolicyModel } from "../../model/mod.ts";
import { sampledIds, scriptedLogprob } from "../../runner/mod.ts";
import { postJson, trainerLoop } from "./trainer_loop.ts";

export { pythonJson } from "../../model/mod.ts";
export { answerText, scriptedLogprob, toolCallText } from "../../runner/mod.ts";

/** What the policy decides to say for one prompt: the raw text the model would sample. */
export type TextScript = (prompt: { text: string; ids: number[]; turn: number }) => string;

/**
 * A `TextScript`, or one answering the message it means (written in the family's format) or the
 * ids themselves.
 */
export type Script = (
  prompt: { text: string; ids: number[]; turn: number },
) => Reply | Promise<Reply>;
type Reply = string | AssistantMessage | number[];

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
      /** The policy's model (default: the bundled Qwen3). */
      model?: PolicyModel;
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
    const model = this.options.model ?? await sharedModel();
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
        const reply = await this.script({ text, ids: req.prompt_ids, turn: this.records.length });
        const output_ids = typeof reply === "string"
          ? await model.tokenizer.encode(reply)
          : Array.isArray(reply)
          ? reply
          : await sampledIds(model, reply);
        const logprobs = output_ids.map((_, i) => scriptedLogprob(i));
        const base = `${this.gatewayUrl}/api/requests/${req.request_id}`;
        const chunk = this.options.appendChunk ?? 0;
        for (let i = 0; chunk > 0 && i < output_ids.length; i += chunk) {
          await postJson(`${base}/append`, { output_ids: output_ids.slice(i, i + chunk) }, headers);
        }
        // Recorded before `complete`: the agent can have its answer, finish and be checked
        // before `complete`'s own response reaches this loop.
        this.records.push({ ...req, output_ids, logprobs });
        await postJson(
          `${base}/complete`,
          { output_ids, logprobs, finish_reason: "stop" },
          headers,
        );
      },
    });
  }
}
