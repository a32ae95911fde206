/**
 * What a chain of turns is, decided when its first turn arrives: the agent's main line, a
 * sub-agent it spawned, a continuation after compaction, or a side request. Turns that extend a
 * recorded turn inherit its chain and label.
 *
 * Evidence for each decision is kept and ends up in the sample metadata, so a trainer (or a
 * person reading `main.ts inspect`) can check why a chain got its label.
 *
 * @module
 */
import type { Message, ToolSpec } from "../../canonical/mod.ts";
import { firstMessage, type Turn } from "../turn.ts";

/**
 * What a chain can be. `rewrite` and `retry` are forks inside a recorded chain, `rerender` the
 * continuation of a chain the engine's render no longer extends (see `fork_label.ts`); the
 * others start from a full render.
 */
export const BRANCH_LABELS = [
  "main",
  "subagent",
  "compaction",
  "rewrite",
  "retry",
  "rerender",
  "side",
] as const;
export type BranchLabel = typeof BRANCH_LABELS[number];

export interface Chain {
  id: number;
  label: BranchLabel;
  /** First turn of the chain. */
  root: Turn;
  /**
   * The chain this one hangs off (sub-agent: the spawning chain; compaction: the replaced one;
   * rewrite, retry: the chain it forks from, which owns the shared prefix; rerender: the chain it
   * continues).
   */
  parent: number | null;
  evidence: Record<string, unknown>;
  /** Most recent turn of the chain, for "which chain did this replace". */
  latest: Turn;
}

/** A call of a sub-agent tool (Claude Code's `Agent`/`Task`, Codex's `spawn_agent`) with no result yet. */
export interface OpenAgentCall {
  id: string;
  name: string;
  arguments: string;
  turn: Turn;
  chain: number;
}

/** Tool names that spawn a sub-agent. */
export const AGENT_TOOL_NAMES = /^(agent|task|spawn_agent|dispatch_agent|subagent|delegate)$/i;

export function systemPrompt(messages: readonly Message[]): string {
  return messages[0]?.role === "system" ? messages[0].content : "";
}

/** A recorded turn's system prompt, without assembling its history. */
function systemPromptOf(turn: Turn): string {
  const first = firstMessage(turn);
  return first?.role === "system" ? first.content : "";
}

function firstUserText(messages: readonly Message[]): string {
  return messages.find((m) => m.role === "user")?.content ?? "";
}

function promptArgument(args: string): string {
  try {
    const parsed = JSON.parse(args);
    for (const k of ["prompt", "description", "message", "task"]) {
      if (typeof parsed?.[k] === "string") return parsed[k];
    }
  } catch { /* not JSON */ }
  return "";
}

/** What {@link classifyChain} decides for a new chain. */
export interface ChainClass extends Pick<Chain, "label" | "parent" | "evidence"> {
  /**
   * An earlier chain this one shows to have been a side request after all: the caller relabels it
   * with {@link demoteToSide}.
   */
  demote?: number;
}

/**
 * Relabels `chain` as `side`: a one-request, tool-less first chain that a later chain offering
 * tools showed to be a side request (e.g. OpenCode's session title, asked before the first turn).
 */
export function demoteToSide(chain: Chain, by: number): void {
  chain.evidence = {
    ...chain.evidence,
    reason: "tool-less request sent ahead of the agent's first turn",
    demoted_by_chain: by,
    first_label: chain.label,
  };
  chain.label = "side";
}

export interface ClassifyInput {
  messages: readonly Message[];
  tools: readonly ToolSpec[];
  /** Leading messages that matched a recorded history before diverging. */
  matched: number;
}

/**
 * Labels a new chain given the rollout's chains so far and its open sub-agent calls.
 * Returns the label, the chain it hangs off and the evidence.
 */
export function classifyChain(
  input: ClassifyInput,
  chains: readonly Chain[],
  openCalls: readonly OpenAgentCall[],
): ChainClass {
  if (chains.length === 0) {
    return { label: "main", parent: null, evidence: { reason: "first request of the rollout" } };
  }
  const system = systemPrompt(input.messages);
  const known = chains.filter((c) => systemPromptOf(c.root) === system);
  const first = firstUserText(input.messages);
  const matches = (c: OpenAgentCall) => {
    const p = promptArgument(c.arguments);
    return p !== "" && first.includes(p);
  };
  // An open call's prompt under a system prompt other than its caller's is that call's sub-agent,
  // even when a sibling sub-agent (spawned in parallel) already has this system prompt, unless a
  // chain already matched that prompt (then this is, e.g., that sub-agent compacted).
  const matched = openCalls.findLast((c) =>
    matches(c) && systemPromptOf(c.turn) !== system &&
    !chains.some((k) => k.evidence.tool_call_id === c.id && k.evidence.prompt_matched === true)
  );
  // Without a prompt match only a request offering tools can be a sub-agent at work; a tool-less
  // one (title generation while the sub-agent runs) is a side request.
  if (matched || (known.length === 0 && openCalls.length > 0 && input.tools.length > 0)) {
    const call = matched ?? openCalls.at(-1)!;
    return {
      label: "subagent",
      parent: call.chain,
      evidence: {
        reason: "new system prompt while a sub-agent tool call was pending",
        tool_call_id: call.id,
        tool_name: call.name,
        parent_turn: call.turn.id,
        prompt_matched: promptArgument(call.arguments) !== "" &&
          first.includes(promptArgument(call.arguments)),
      },
    };
  }
  // The first request of a rollout is taken for the main line. When it offered no tools, was not
  // continued, and now the first request offering tools arrives under a system prompt of its own,
  // that first request was a side request sent ahead of the agent's first turn (OpenCode asks for
  // a session title first): this chain is the main line. An agent without tools (mini-swe-agent)
  // never offers any, so its conversation stays main.
  const opening = chains[0];
  if (
    known.length === 0 && input.tools.length > 0 && opening.label === "main" &&
    opening.root === opening.latest && chains.every((c) => c.root.tools.length === 0)
  ) {
    return {
      label: "main",
      parent: null,
      evidence: {
        reason: "first request offering tools; the tool-less request before it was a side request",
        demoted_chain: opening.id,
      },
      demote: opening.id,
    };
  }
  // Only side chains have this system prompt: a recurring side request (another title), not a
  // compaction of one.
  if (
    known.length === 0 || known.every((c) => c.label === "side") ||
    input.tools.length === 0 && known.every((c) => c.root.tools.length > 0)
  ) {
    return {
      label: "side",
      parent: null,
      evidence: {
        reason: input.tools.length === 0 ? "no tools offered" : "system prompt of no other chain",
      },
    };
  }
  const replaced = known.reduce((a, b) => (b.latest.index > a.latest.index ? b : a));
  return {
    label: "compaction",
    parent: replaced.id,
    evidence: {
      reason: "same system prompt, history no longer extends the chain",
      replaced_chain: replaced.id,
      replaced_turn: replaced.latest.id,
      matched_messages: input.matched,
      replaced_messages: replaced.latest.history.depth,
      new_messages: input.messages.length,
    },
  };
}
