/**
 * The turn tree export in a compact form: every id once, in one `tokens` array, and each turn
 * with `[start, end)` ranges into it instead of its own `prompt_ids`, `output_ids` and
 * `bridge_ids`. A turn's prompt is its ancestors' ranges followed by its own context, so the
 * export grows with the ids the rollout holds, not with the sum of every turn's prompt
 * (`turnTree`, which repeats the whole history per turn). `expandCompactTree` gives back exactly
 * what `turnTree` exports.
 *
 * @example
 * ```ts
 * import { compactTurnTree, expandCompactTree, RolloutStore } from "./mod.ts";
 *
 * const rollout = new RolloutStore().create({ id: "example" });
 * const compact = compactTurnTree(rollout);
 * const full = expandCompactTree(compact); // = turnTree(rollout)
 * console.log(compact.tokens.length, full.turns.length); // 0 0
 * ```
 *
 * @module
 */
import type { Rollout } from "./rollout.ts";
import { pushAll } from "./turn.ts";
import { chainRecords, type TurnRecord, turnRecord, type TurnTreeExport } from "./tree_export.ts";

/** A turn's record with ranges into the export's `tokens` in place of its ids. */
export interface CompactTurnRecord
  extends Omit<TurnRecord, "prompt_ids" | "output_ids" | "bridge_ids"> {
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
  turns: CompactTurnRecord[];
}

const NO_IDS: number[] = [];

export function compactTurnTree(rollout: Rollout): CompactTreeExport {
  const tokens: number[] = [];
  const turns = rollout.turns.map((t): CompactTurnRecord => {
    const c0 = tokens.length;
    pushAll(tokens, t.bridgeIds);
    pushAll(tokens, t.deltaIds);
    const o0 = tokens.length;
    pushAll(tokens, t.outputIds);
    const { prompt_ids: _p, output_ids: _o, bridge_ids: _b, ...record } = turnRecord(
      rollout,
      t,
      NO_IDS,
    );
    return {
      ...record,
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
    turns,
  };
}

/** The full export (`turnTree`'s form) from the compact one. */
export function expandCompactTree(compact: CompactTreeExport): TurnTreeExport {
  const byId = new Map(compact.turns.map((t) => [t.id, t]));
  const slice = ([start, end]: [number, number]) => compact.tokens.slice(start, end);
  const turns = compact.turns.map(({ context, bridge, output, ...record }): TurnRecord => {
    const deltaEmpty = context[1] - context[0] === bridge;
    const path: CompactTurnRecord[] = [];
    for (let p = record.parent; p !== null; p = byId.get(p)?.parent ?? null) {
      const parent = byId.get(p);
      if (!parent) throw new Error(`turn ${record.id}: parent ${p} is not in the export`);
      path.push(parent);
    }
    const prompt: number[] = [];
    if (!(record.status === "failed" && deltaEmpty)) {
      for (const a of path.reverse()) {
        pushAll(prompt, compact.tokens.slice(a.context[0], a.output[1]));
      }
      pushAll(prompt, slice(context));
    }
    return {
      ...record,
      prompt_ids: prompt,
      output_ids: slice(output),
      bridge_ids: compact.tokens.slice(context[0], context[0] + bridge),
    };
  });
  return { format: "rollgate.tree.v1", rollout: compact.rollout, chains: compact.chains, turns };
}
