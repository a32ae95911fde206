/**
 * The turn tree export in a compact form: every id once, in one `tokens` array, and each turn
 * with `[start, end)` ranges into it instead of its own `prompt_ids`, `output_ids` and
 * `bridge_ids`; likewise every message once (the rollout's message tree, `messages`) and each
 * distinct tools array once (`tool_sets`), referenced by index. A turn's prompt is its ancestors'
 * ranges followed by its own context, and its history the path from the root to its node, so the
 * export grows with what the rollout holds, not with the sum of every turn's prompt and history
 * (`turnTree`, which repeats them per turn). `expandCompactTree` gives back exactly what
 * `turnTree` exports.
 *
 * @example
 * ```ts
 * import { compactTurnTree, expandCompactTree, RolloutStore } from "../mod.ts";
 *
 * const rollout = new RolloutStore().create({ id: "example" });
 * const compact = compactTurnTree(rollout);
 * const full = expandCompactTree(compact); // = turnTree(rollout)
 * console.log(compact.tokens.length, full.turns.length); // 0 0
 * ```
 *
 * @module
 */
import type { Message, ToolSpec } from "../../canonical/mod.ts";
import type { Rollout } from "../rollout.ts";
import { type HistoryEdits, type HistoryNode, pushAll } from "../turn.ts";
import { chainRecords, type TurnRecord, turnRecord, type TurnTreeExport } from "./tree_export.ts";

/** A turn's record with ranges into the export's `tokens` in place of its ids. */
export interface CompactTurnRecord
  extends Omit<TurnRecord, "prompt_ids" | "output_ids" | "bridge_ids" | "messages" | "tools"> {
  /**
   * Index in `messages` of the node the turn's history ends at (the history is the path from the
   * root to it), or null for an empty history.
   */
  history: number | null;
  /** Messages the request sent in another form than the tree's node, by history index. */
  history_edits: HistoryEdits;
  /** Index in `tool_sets`. */
  tools: number;
  /**
   * `[start, end)` in `tokens` of the ids this turn added after its parent's output: its bridge
   * ids, then its delta. The turn's prompt is, for each ancestor from the root, the ancestor's
   * `context` then its `output`, followed by this `context`.
   */
  context: [number, number];
  /** How many of the `context` ids are bridge ids (appended after the parent's output unsampled). */
  bridge: number;
  /** `[start, end)` in `tokens` of the sampled ids. */
  output: [number, number];
}

export interface CompactTreeExport {
  format: "rollgate.tree.compact.v1";
  rollout: TurnTreeExport["rollout"];
  chains: TurnTreeExport["chains"];
  /** Every turn's bridge, delta and output ids, each turn's once, in turn order. */
  tokens: number[];
  /** The message tree: each node once, a parent before its children. */
  messages: { parent: number | null; message: Message }[];
  tool_sets: ToolSpec[][];
  turns: CompactTurnRecord[];
}

const NO_IDS: number[] = [];
const NO_MESSAGES: Message[] = [];

export function compactTurnTree(rollout: Rollout): CompactTreeExport {
  const tokens: number[] = [];
  const messages: CompactTreeExport["messages"] = [];
  const nodes = new Map<HistoryNode, number>();
  /** The node's index, numbering it and the ancestors not seen yet (each node once). */
  const nodeIndex = (node: HistoryNode): number | null => {
    const unseen: HistoryNode[] = [];
    let n: HistoryNode | null = node;
    for (; n && n.depth > 0 && !nodes.has(n); n = n.parent) unseen.push(n);
    let parent = n && n.depth > 0 ? nodes.get(n)! : null;
    for (let i = unseen.length - 1; i >= 0; i--) {
      nodes.set(unseen[i], messages.length);
      messages.push({ parent, message: unseen[i].message! });
      parent = messages.length - 1;
    }
    return node.depth > 0 ? nodes.get(node)! : null;
  };
  const toolSets = new Map<ToolSpec[], number>();
  const turns = rollout.turns.map((t): CompactTurnRecord => {
    const c0 = tokens.length;
    pushAll(tokens, t.bridgeIds);
    pushAll(tokens, t.deltaIds);
    const o0 = tokens.length;
    pushAll(tokens, t.outputIds);
    if (!toolSets.has(t.tools)) toolSets.set(t.tools, toolSets.size);
    const { prompt_ids: _p, output_ids: _o, bridge_ids: _b, messages: _m, ...record } = turnRecord(
      rollout,
      t,
      NO_IDS,
      NO_MESSAGES,
    );
    return {
      ...record,
      history: nodeIndex(t.history),
      history_edits: t.historyEdits,
      tools: toolSets.get(t.tools)!,
      context: [c0, o0],
      bridge: t.bridgeIds.length,
      output: [o0, tokens.length],
    };
  });
  return {
    format: "rollgate.tree.compact.v1",
    rollout: rollout.summary(),
    chains: chainRecords(rollout),
    tokens,
    messages,
    tool_sets: [...toolSets.keys()],
    turns,
  };
}

/** The full export (`turnTree`'s form) from the compact one. */
export function expandCompactTree(compact: CompactTreeExport): TurnTreeExport {
  const byId = new Map(compact.turns.map((t) => [t.id, t]));
  const slice = ([start, end]: [number, number]) => compact.tokens.slice(start, end);
  const historyAt = (node: number | null, edits: HistoryEdits): Message[] => {
    const path: Message[] = [];
    for (let n = node; n !== null; n = compact.messages[n].parent) {
      path.push(compact.messages[n].message);
    }
    path.reverse();
    for (const [i, m] of edits) path[i] = m;
    return path;
  };
  const turns = compact.turns.map((compactTurn): TurnRecord => {
    const { context, bridge, output, history, history_edits, tools, ...record } = compactTurn;
    const path: CompactTurnRecord[] = [];
    for (let p = record.parent; p !== null; p = byId.get(p)?.parent ?? null) {
      const parent = byId.get(p);
      if (!parent) throw new Error(`turn ${record.id}: parent ${p} is not in the export`);
      path.push(parent);
    }
    const prompt: number[] = [];
    const deltaEmpty = context[1] - context[0] === bridge;
    if (!(record.status === "failed" && deltaEmpty)) {
      for (const a of path.reverse()) pushAll(prompt, slice([a.context[0], a.output[1]]));
      pushAll(prompt, slice(context));
    }
    const full: TurnRecord = {
      ...record,
      messages: historyAt(history, history_edits),
      tools: compact.tool_sets[tools],
      prompt_ids: prompt,
      output_ids: slice(output),
      bridge_ids: slice([context[0], context[0] + bridge]),
    };
    return full;
  });
  return { format: "rollgate.tree.v1", rollout: compact.rollout, chains: compact.chains, turns };
}
