/**
 * Bookkeeping of chains and sub-agent calls as turns arrive and answers are recorded (by
 * `turn_runner.ts`, for token and black-box turns alike).
 *
 * @module
 */
import type {
  AssistantMessage,
  CanonicalRequest,
  Message,
  TurnAnswer,
} from "../../canonical/mod.ts";
import {
  AGENT_TOOL_NAMES,
  type Chain,
  classifyChain,
  demoteToSide,
  type Rerender,
  rerenderFork,
  retryFork,
  rewriteFork,
} from "../chains/mod.ts";
import { type MessageNode, type Mount, sameForm, TurnTree } from "../tree/mod.ts";
import type { Rollout } from "../rollout.ts";
import { type HistoryEdits, newTurn, noIds, type Turn } from "../turn.ts";

/**
 * Creates a pending turn for a request mounted at `mount`, hangs it in the tree, puts it on its
 * chain and appends it to the rollout — synchronously, so a concurrent retry finds it.
 */
export function registerTurn(
  rollout: Rollout,
  req: CanonicalRequest,
  mount: Mount,
  result: Promise<TurnAnswer>,
  idSuffix: string,
): { turn: Turn; promptNode: MessageNode } {
  const turn = newTurn({
    id: `${rollout.id}.${rollout.turns.length}.${idSuffix}`,
    index: rollout.turns.length,
    rolloutId: rollout.id,
    protocol: req.protocol,
    parent: mount.base,
    mount: mount.base ? "extend" : rollout.turns.length === 0 ? "root" : "rewritten",
    chain: 0,
    retries: 0,
    session: req.session ?? null,
    next: null,
    specialText: [],
    drift: null,
    toolSpans: [],
    images: [],
    history: mount.node,
    historyEdits: sharedEdits(mount.edits, mount.base),
    tools: rollout.tree.internTools(TurnTree.rootKey(req), req.tools),
    renderedMessages: 0,
    ids: noIds(),
    promptLength: 0,
    maxTokens: 0,
    logprobs: null,
    malformedToolCalls: 0,
    status: "pending",
    result,
    timings: { received: Date.now() },
  });
  const promptNode = rollout.tree.attach(mount, req.messages, turn);
  turn.history = promptNode;
  assignChain(rollout, turn, mount, req.messages);
  rollout.turns.push(turn);
  return { turn, promptNode };
}

/**
 * `edits` with the base turn's own objects where it sent the same message in the same form: a
 * client that re-serializes every earlier tool call (each request) keeps one copy per message,
 * not one per turn.
 */
function sharedEdits(edits: HistoryEdits, base: Turn | null): HistoryEdits {
  const known = base?.historyEdits ?? [];
  if (edits.length === 0 || known.length === 0) return edits;
  let k = 0;
  return edits.map(([i, m]) => {
    while (k < known.length && known[k][0] < i) k++;
    return k < known.length && known[k][0] === i && sameForm(known[k][1], m) ? known[k] : [i, m];
  });
}

/** Puts a new turn on its parent's chain, or labels the chain it starts; closes sub-agent calls. */
export function assignChain(
  rollout: Rollout,
  turn: Turn,
  mount: Mount,
  messages: readonly Message[],
): void {
  for (const m of messages.slice(mount.baseDepth)) {
    if (m.role !== "tool") continue;
    const call = rollout.openAgentCalls.get(m.tool_call_id);
    if (!call) continue;
    rollout.openAgentCalls.delete(m.tool_call_id);
    // Every chain that claimed the call (a guess without prompt match may precede the real one).
    for (const sub of rollout.chains) {
      if (sub.evidence.tool_call_id === call.id) sub.evidence.closed_by_turn = turn.id;
    }
  }
  const base = turn.parent;
  if (base) {
    const next = base.next;
    if (!next || next.status === "failed") {
      base.next = turn;
      turn.chain = base.chain;
      rollout.chains[turn.chain].latest = turn;
      return;
    }
    // Another live turn already continues the base on its chain: a fork.
    const of = rollout.chains[base.chain];
    const twin = sameHistoryElsewhere(turn, mount, messages.length);
    startChain(
      rollout,
      turn,
      twin ? retryFork(turn, twin, of, base) : rewriteFork(messages, base, next, of, mount),
    );
    return;
  }
  // A re-send of a failed turn (same history, same tools, same client session) takes its place:
  // same chain and mount, not a new chain (a failed root's re-send is not a compaction of it).
  const failed = mount.matched === messages.length
    ? mount.node.promptOf.find((t) =>
      t !== turn && t.status === "failed" && t.session === turn.session
    )
    : undefined;
  if (failed) {
    turn.chain = failed.chain;
    turn.mount = failed.mount;
    const chain = rollout.chains[turn.chain];
    if (chain.root === failed) chain.root = turn;
    chain.latest = turn;
    return;
  }
  const twin = sameHistoryElsewhere(turn, mount, messages.length);
  if (twin) {
    startChain(rollout, turn, retryFork(turn, twin, rollout.chains[twin.chain], null));
    return;
  }
  // The history holds a recorded turn's whole request and then another answer than its own: the
  // client rewrote a chain's first answer (nothing sampled is shared, so no base).
  const prompted = lastPromptAbove(turn, mount, messages.length);
  if (prompted && messages[prompted.history.depth]?.role === "assistant") {
    const of = rollout.chains[prompted.chain];
    startChain(rollout, turn, rewriteFork(messages, null, prompted, of, mount));
    return;
  }
  const { demote, ...label } = classifyChain(
    { messages, tools: turn.tools, matched: mount.matched },
    rollout.chains,
    [...rollout.openAgentCalls.values()],
  );
  startChain(rollout, turn, label);
  if (demote !== undefined) demoteToSide(rollout.chains[demote], turn.chain);
}

/**
 * A live turn whose request had exactly this history: one of another client session (a request
 * of the same session, or of a client that sends none, would have been replayed as a retry).
 */
function sameHistoryElsewhere(turn: Turn, mount: Mount, length: number): Turn | undefined {
  if (mount.matched !== length) return undefined;
  return mount.node.promptOf.find((t) => t !== turn && t.status !== "failed");
}

/**
 * The live turn whose whole history is the longest matched prefix shorter than `turn`'s: walks up
 * from where the request left the tree (only for requests that extend no recorded turn).
 */
function lastPromptAbove(turn: Turn, mount: Mount, length: number): Turn | undefined {
  let n: MessageNode | null = mount.node;
  if (n.depth === length) n = n.parent;
  for (; n; n = n.parent) {
    const live = n.promptOf.findLast((t) => t !== turn && t.status !== "failed");
    if (live) return live;
  }
  return undefined;
}

/**
 * Takes a planned turn off its base's line: the engine's render of its history does not extend
 * the base's prompt and output (`rerender`), so its prompt is that render, sharing nothing. The
 * base ends its chain's line (its sample is the chain's up to it); the turn starts a `rerender`
 * chain continuing it, or, when it began a chain already (a fork), keeps it with the evidence.
 */
export function splitChain(rollout: Rollout, turn: Turn, rerender: Rerender): void {
  const base = turn.parent!;
  if (base.next === turn) base.next = null;
  turn.parent = null;
  turn.mount = "rerendered";
  const of = rollout.chains[turn.chain];
  if (of.root === turn) {
    of.evidence = { ...of.evidence, rerender };
    return;
  }
  if (of.latest === turn) of.latest = base;
  startChain(rollout, turn, rerenderFork(of, rerender));
}

function startChain(
  rollout: Rollout,
  turn: Turn,
  label: Pick<Chain, "label" | "parent" | "evidence">,
) {
  turn.chain = rollout.chains.length;
  rollout.chains.push({ id: turn.chain, root: turn, latest: turn, ...label });
}

/** Remembers the sub-agent tool calls of a recorded answer until their results come back. */
export function openAgentCalls(rollout: Rollout, turn: Turn, answer: AssistantMessage): void {
  for (const call of answer.tool_calls ?? []) {
    if (AGENT_TOOL_NAMES.test(call.name)) {
      rollout.openAgentCalls.set(call.id, { ...call, turn, chain: turn.chain });
    }
  }
}
