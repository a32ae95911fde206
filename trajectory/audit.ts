/**
 * The drift audit: re-render every recorded turn in full with the model's chat template and
 * compare with the prompt ids the gateway actually used, and check that every turn extends its
 * parent verbatim. This is how a user verifies the data without trusting the gateway.
 *
 * @module
 */
import type { PolicyModel } from "../model/mod.ts";
import type { TurnRecord, TurnTreeExport } from "./tree_export.ts";

export interface TurnAudit {
  turn: string;
  chain: number;
  branch: string;
  prompt_length: number;
  /** The gateway's prompt ids equal a full render of the turn's history. */
  equals_full_render: boolean;
  /** First index where they differ, with decoded context on both sides. */
  first_difference?: {
    position: number;
    gateway: string;
    full_render: string;
    /** The difference falls inside ids an earlier turn sampled (kept verbatim by design). */
    inside_sampled_output: boolean;
  };
  /** prompt = parent prompt + parent output (+ bridge) + delta, id for id (null for chain roots). */
  extends_parent: boolean | null;
  drift: TurnRecord["drift"];
  /** Tool calls in the policy's output that did not parse (answered to the agent as text). */
  malformed_tool_calls: number;
}

export interface RolloutAudit {
  rollout: string;
  turns: TurnAudit[];
  summary: string;
}

function startsWith(ids: readonly number[], prefix: readonly number[]): boolean {
  if (prefix.length > ids.length) return false;
  for (let i = 0; i < prefix.length; i++) if (ids[i] !== prefix[i]) return false;
  return true;
}

/** Index ranges of sampled ids inside a turn's prompt (its ancestors' outputs). */
function sampledRanges(turn: TurnRecord, byId: Map<string, TurnRecord>): [number, number][] {
  const ranges: [number, number][] = [];
  for (
    let p = turn.parent ? byId.get(turn.parent) : undefined;
    p;
    p = p.parent ? byId.get(p.parent) : undefined
  ) {
    ranges.push([p.prompt_ids.length, p.prompt_ids.length + p.output_ids.length]);
  }
  return ranges;
}

export async function auditTree(model: PolicyModel, tree: TurnTreeExport): Promise<RolloutAudit> {
  const byId = new Map(tree.turns.map((t) => [t.id, t]));
  const audits: TurnAudit[] = [];
  for (const t of tree.turns) {
    if (t.prompt_ids.length === 0) continue;
    const { ids } = await model.renderFull(t.messages, t.tools);
    let diff = -1;
    for (let i = 0; i < Math.max(ids.length, t.prompt_ids.length); i++) {
      if (ids[i] !== t.prompt_ids[i]) {
        diff = i;
        break;
      }
    }
    const audit: TurnAudit = {
      turn: t.id,
      chain: t.chain,
      branch: t.branch,
      prompt_length: t.prompt_ids.length,
      equals_full_render: diff < 0,
      extends_parent: null,
      drift: t.drift,
      malformed_tool_calls: t.malformed_tool_calls ?? 0,
    };
    if (diff >= 0) {
      const around = (xs: number[]) => model.decode(xs.slice(Math.max(0, diff - 8), diff + 8));
      audit.first_difference = {
        position: diff,
        gateway: await around(t.prompt_ids),
        full_render: await around(ids),
        inside_sampled_output: sampledRanges(t, byId).some(([a, b]) => diff >= a && diff < b),
      };
    }
    const parent = t.parent ? byId.get(t.parent) : undefined;
    if (parent) {
      audit.extends_parent = startsWith(t.prompt_ids, [
        ...parent.prompt_ids,
        ...parent.output_ids,
        ...t.bridge_ids,
      ]);
    }
    audits.push(audit);
  }
  const count = (f: (a: TurnAudit) => boolean) => audits.filter(f).length;
  const equal = count((a) => a.equals_full_render);
  const retained = count((a) => a.first_difference?.inside_sampled_output === true);
  const extended = count((a) => a.extends_parent === true);
  const broken = count((a) => a.extends_parent === false);
  const id = String(tree.rollout.id);
  return {
    rollout: id,
    turns: audits,
    summary: `${id}: ${audits.length} turns; ${equal} equal a full render, ${retained} differ ` +
      `only where sampled ids are kept, ${audits.length - equal - retained} differ elsewhere; ` +
      `${extended} extend their parent verbatim, ${broken} do not; ` +
      `${count((a) => a.drift !== null)} with drift; ` +
      `${audits.reduce((n, a) => n + a.malformed_tool_calls, 0)} malformed tool calls ` +
      `(in ${count((a) => a.malformed_tool_calls > 0)} turns, answered as text)`,
  };
}
