/**
 * Drives a generated conversation turn by turn through a real `TurnRunner`, the way an agent
 * client would: each request carries the whole history so far, echoing the gateway's tool-call
 * ids; the generation backend is the in-memory test double, which returns the tokenized sampled
 * text of the turn.
 *
 * @module
 */
import type { CanonicalRequest, Message } from "../../canonical/mod.ts";
import type { PolicyModel } from "../../model/mod.ts";
import { promptIds, Rollout, type Turn, TurnRunner } from "../../trajectory/mod.ts";
import { InMemoryBackendTestDouble } from "../support/in_memory_backend.ts";
import { type GeneratedConversation, type GeneratedTurn, Rng } from "./conversation_generator.ts";

export interface DriveOptions {
  /**
   * Whether the backend returns turn `k`'s output without its trailing end id (engines that
   * strip stop tokens; GLM: without its closing role marker); the gateway then bridges it,
   * untrained (GLM: the next delta's marker closes it). Default: never.
   */
  stripEndOfTurn?: (k: number) => boolean;
  /** Whether the backend reports logprobs. Default: yes. */
  logprobs?: boolean;
  /** Ids the policy sampled for turn `k`; default: the tokenized sampled text. */
  sampledIds?: (k: number, text: string) => Promise<number[]> | undefined;
}

export interface DrivenTurn {
  generated: GeneratedTurn;
  turn: Turn;
  /** The history the client sent (with the gateway's tool-call ids). */
  history: Message[];
  /** Ids of the whole sampled text, `<|im_end|>` included. */
  sampledIds: number[];
  /** What the backend returned. */
  outputIds: number[];
  logprobs: number[] | null;
  /** `promptIds(turn)` once the turn is done. */
  promptIds: number[];
  /** The prompt ids the backend received. */
  backendPromptIds: number[];
}

export interface DrivenConversation {
  conversation: GeneratedConversation;
  rollout: Rollout;
  backend: InMemoryBackendTestDouble;
  turns: DrivenTurn[];
  /** The whole conversation as the client finally holds it (gateway tool-call ids). */
  messages: Message[];
}

/** Replaces generator tool-call ids by the gateway's, as a client echoing its history does. */
export function withGatewayIds(
  messages: readonly Message[],
  ids: ReadonlyMap<string, string>,
): Message[] {
  return messages.map((m) => {
    if (m.role === "tool") return { ...m, tool_call_id: ids.get(m.tool_call_id) ?? m.tool_call_id };
    if (m.role === "assistant" && m.tool_calls) {
      return { ...m, tool_calls: m.tool_calls.map((c) => ({ ...c, id: ids.get(c.id) ?? c.id })) };
    }
    return m;
  });
}

export async function driveConversation(
  model: PolicyModel,
  conversation: GeneratedConversation,
  options: DriveOptions = {},
): Promise<DrivenConversation> {
  const backend = new InMemoryBackendTestDouble();
  const runner = new TurnRunner(model, backend);
  const rollout = new Rollout(`conv${conversation.seed}`, "token", {}, {});
  const rng = new Rng(conversation.seed * 7919);
  const ids = new Map<string, string>();
  const turns: DrivenTurn[] = [];
  for (const [k, generated] of conversation.turns.entries()) {
    const history = withGatewayIds(conversation.messages.slice(0, generated.index), ids);
    const sampledIds = await (options.sampledIds?.(k, generated.sampledText) ??
      model.tokenizer.encode(generated.sampledText));
    const strip = options.stripEndOfTurn?.(k) ?? false;
    const ends = model.format.closingMarkers ?? model.turnEnd.ids;
    const outputIds = strip && ends.includes(sampledIds.at(-1)!)
      ? sampledIds.slice(0, -1)
      : sampledIds;
    const logprobs = options.logprobs === false
      ? null
      : outputIds.map(() => -Math.round(rng.next() * 5e6) / 1e6);
    backend.enqueue({
      output_ids: outputIds,
      ...(logprobs ? { logprobs } : {}),
      finish_reason: "stop",
    });
    const req: CanonicalRequest = {
      protocol: "chat",
      model: "policy",
      messages: history,
      tools: conversation.tools,
      sampling: {},
      stream: false,
    };
    const turn = await runner.start(rollout, req, "call_");
    await turn.result;
    const expected = conversation.messages[generated.index];
    if (expected.role === "assistant") {
      const got = turn.message?.tool_calls ?? [];
      (expected.tool_calls ?? []).forEach((c, i) => {
        if (got[i]) ids.set(c.id, got[i].id);
      });
    }
    turns.push({
      generated,
      turn,
      history,
      sampledIds,
      outputIds,
      logprobs,
      promptIds: Array.from(promptIds(turn)),
      backendPromptIds: Array.from(backend.requests.at(-1)!.promptIds),
    });
  }
  return {
    conversation,
    rollout,
    backend,
    turns,
    messages: withGatewayIds(conversation.messages, ids),
  };
}

/** Index of the first position where `a` and `b` differ, or -1 when equal. */
export function firstDifference(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

/** Whether `ids` begins with `prefix`. */
export function startsWith(ids: readonly number[], prefix: readonly number[]): boolean {
  return prefix.length <= ids.length && prefix.every((id, i) => ids[i] === id);
}
