/**
 * Exports of a rollout's turn tree.
 *
 * - `sharedPrefixTree`: every token once, with per-turn ranges, for trainers that pack prefix
 *   trees (a chain's sample is the concatenation of its turns' ranges, root to leaf).
 * - `turnTree`: each turn with its canonical history and tools as rendered, its exact prompt and
 *   output ids: what `main.ts audit` and `main.ts inspect` read.
 *
 * @module
 */
import type { AssistantMessage, Message, ToolSpec } from "../../canonical/mod.ts";
import type { Rollout } from "../rollout.ts";
import { promptIds, pushAll, type Turn } from "../turn.ts";

export interface SharedPrefixNode {
  turn: string;
  parent: string | null;
  chain: number;
  branch: string;
  /** `[start, end)` in `tokens` of the ids this turn added to its parent's (bridge + delta). */
  context: [number, number];
  /** `[start, end)` in `tokens` of the sampled ids. */
  output: [number, number];
}

export interface SharedPrefixTree {
  rollout_id: string;
  tokens: number[];
  /** Aligned with `tokens`: 1 on sampled ids. */
  sampled: number[];
  /**
   * Aligned with `tokens`: the sampled ids' logprobs (`null` for a turn whose producer reported
   * none), 0 elsewhere.
   */
  logprobs: (number | null)[];
  nodes: SharedPrefixNode[];
}

export function sharedPrefixTree(rollout: Rollout): SharedPrefixTree {
  const tokens: number[] = [], sampled: number[] = [], logprobs: (number | null)[] = [];
  const nodes: SharedPrefixNode[] = [];
  for (const t of rollout.turns) {
    if (t.status !== "done") continue;
    const c0 = tokens.length;
    pushAll(tokens, t.bridgeIds);
    pushAll(tokens, t.deltaIds);
    const o0 = tokens.length;
    pushAll(tokens, t.outputIds);
    for (let i = c0; i < o0; i++) {
      sampled.push(0);
      logprobs.push(0);
    }
    for (let i = 0; i < t.outputIds.length; i++) {
      sampled.push(1);
      logprobs.push(t.logprobs ? t.logprobs[i] : null);
    }
    nodes.push({
      turn: t.id,
      parent: t.parent?.id ?? null,
      chain: t.chain,
      branch: rollout.chains[t.chain]?.label ?? "main",
      context: [c0, o0],
      output: [o0, tokens.length],
    });
  }
  return { rollout_id: rollout.id, tokens, sampled, logprobs, nodes };
}

export interface TurnRecord {
  id: string;
  index: number;
  parent: string | null;
  chain: number;
  branch: string;
  mount: string;
  /** The agent's wire protocol (`anthropic`, `chat`, `responses`). */
  protocol: string;
  /** The answer came from a hosted API: messages only, no token ids. */
  black_box: boolean;
  status: string;
  error: string | null;
  /** The request's canonical history. */
  messages: Message[];
  /** The parsed sampled answer, when done. */
  answer: AssistantMessage | null;
  tools: ToolSpec[];
  rendered_messages: number;
  prompt_ids: number[];
  output_ids: number[];
  logprobs: number[] | null;
  finish_reason: string | null;
  retries: number;
  /** The client session the request came from, when the client sent one. */
  session: string | null;
  drift: Turn["drift"];
  /**
   * Special-token text in the system, user and tool content this turn rendered (count = length):
   * message index, offset in its content, token, and `position` in `prompt_ids` of the control id
   * it became (null when tokenized as plain text).
   */
  special_text: Turn["specialText"];
  tool_spans: Turn["toolSpans"];
  /**
   * The images the turn rendered: each one's pads in its context ids (bridge + delta, as
   * `tool_spans`), hash and size; absent when none.
   */
  images?: Turn["images"];
  /** Ids appended after the parent's output without being sampled (end-of-turn bridge). */
  bridge_ids: number[];
  malformed_tool_calls: number;
  weight_version: string | number | null;
  /** Sampling facts, per-chunk versions, where its routing rows lie (when recorded). */
  facts?: Turn["facts"];
  timings: Turn["timings"];
}

export interface TurnTreeExport {
  format: "rollgate.tree.v1";
  rollout: Record<string, unknown>;
  chains: {
    id: number;
    label: string;
    parent: number | null;
    root: string;
    evidence: Record<string, unknown>;
  }[];
  turns: TurnRecord[];
}

export function turnTree(rollout: Rollout): TurnTreeExport {
  return {
    format: "rollgate.tree.v1",
    rollout: rollout.summary(),
    chains: chainRecords(rollout),
    turns: rollout.turns.map((t) =>
      turnRecord(
        rollout,
        t,
        t.status === "failed" && t.deltaIds.length === 0 ? [] : promptIds(t),
        t.messages,
      )
    ),
  };
}

/** The rollout's chains as exported. */
export function chainRecords(rollout: Rollout): TurnTreeExport["chains"] {
  return rollout.chains.map((c) => ({
    id: c.id,
    label: c.label,
    parent: c.parent,
    root: c.root.id,
    evidence: c.evidence,
  }));
}

/** A turn's record with `prompt` as its prompt ids and `messages` as its history. */
export function turnRecord(
  rollout: Rollout,
  t: Turn,
  prompt: ArrayLike<number>,
  messages: Message[],
): TurnRecord {
  return {
    id: t.id,
    index: t.index,
    parent: t.parent?.id ?? null,
    chain: t.chain,
    branch: rollout.chains[t.chain]?.label ?? "main",
    mount: t.mount,
    protocol: t.protocol,
    black_box: t.blackBox ?? false,
    status: t.status,
    error: t.error ?? null,
    messages,
    answer: t.message ?? null,
    tools: t.tools,
    rendered_messages: t.renderedMessages,
    prompt_ids: Array.from(prompt),
    output_ids: Array.from(t.outputIds),
    logprobs: t.logprobs ? Array.from(t.logprobs) : null,
    finish_reason: t.finishReason ?? null,
    retries: t.retries,
    session: t.session,
    drift: t.drift,
    special_text: t.specialText,
    tool_spans: t.toolSpans,
    ...(t.images.length ? { images: t.images } : {}),
    bridge_ids: Array.from(t.bridgeIds),
    malformed_tool_calls: t.malformedToolCalls,
    weight_version: t.weightVersion ?? null,
    ...(t.facts ? { facts: t.facts } : {}),
    timings: t.timings,
  };
}
