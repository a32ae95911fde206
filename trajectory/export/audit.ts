/**
 * The drift audit: re-render every recorded turn in full with the model's chat template and
 * compare with the prompt ids the gateway actually used, and check that every turn extends its
 * parent verbatim. This is how a user verifies the data without trusting the gateway.
 *
 * @module
 */
import type { PolicyModel } from "../../model/mod.ts";
import type { TurnRecord, TurnTreeExport } from "./tree_export.ts";
import { type KeptWindow, type PromptDifference, promptDifferences } from "./prompt_differences.ts";

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
    /**
     * The first difference falls inside an earlier turn's kept ids (its generation prompt or its
     * sampled ids, kept verbatim by design); `differences` says where every other one lies.
     */
    inside_sampled_output: boolean;
  };
  /**
   * Every difference, each placed: inside an earlier turn's generation prompt and/or sampled ids
   * (`turn` names it), or `elsewhere` (a defect). Decoded text of both sides, shortened.
   */
  differences?: (PromptDifference & { text: { gateway: string; full_render: string } })[];
  /** prompt = parent prompt + parent output (+ bridge) + delta, id for id (null for chain roots). */
  extends_parent: boolean | null;
  /**
   * Where a re-render of the sampled answer differs from the sampled ids. Those ids are kept
   * verbatim in later prompts, so the turn is on-policy; it is trained unless `drift: "mask"`.
   */
  drift: TurnRecord["drift"];
  /** Special-token text in the content this turn rendered (count = length, with positions). */
  special_text: TurnRecord["special_text"];
  /**
   * Set on the first turn of a fork (`rewrite`, `retry`) or of a `rerender` chain (the engine's
   * render no longer extended the chain): the chain it comes from, and why.
   */
  fork?: { from_chain: number; label: string; evidence: Record<string, unknown> };
  /** Tool calls in the policy's output that did not parse (answered to the agent as text). */
  malformed_tool_calls: number;
}

export interface RolloutAudit {
  rollout: string;
  turns: TurnAudit[];
  /** Chains that fork inside a recorded chain or continue it from a new render, by kind. */
  forks: { rewrite: number; retry: number; rerender: number };
  summary: string;
}

/** Kept windows of an earlier turn: its generation prompt's start, its output's start and end. */
function keptWindows(
  turn: TurnRecord,
  byId: Map<string, TurnRecord>,
  generationPrompt: (t: TurnRecord) => Promise<number>,
): Promise<KeptWindow[]> {
  const chain: TurnRecord[] = [];
  for (
    let p = turn.parent ? byId.get(turn.parent) : undefined;
    p;
    p = p.parent ? byId.get(p.parent) : undefined
  ) {
    chain.unshift(p);
  }
  return Promise.all(chain.map(async (p) => {
    const output = p.prompt_ids.length;
    return {
      turn: p.id,
      start: output - await generationPrompt(p),
      output,
      end: output + p.output_ids.length,
    };
  }));
}

/** Text of `ids[a, b)` with a little context, shortened in the middle when long. */
async function shown(model: PolicyModel, ids: number[], [a, b]: [number, number]) {
  const from = Math.max(0, a - 4);
  if (b - a <= 48) return await model.decode(ids.slice(from, b + 4));
  return `${await model.decode(ids.slice(from, a + 20))}…${await model.decode(
    ids.slice(b - 20, b + 4),
  )}`;
}

function startsWith(ids: readonly number[], prefix: readonly number[]): boolean {
  if (prefix.length > ids.length) return false;
  for (let i = 0; i < prefix.length; i++) if (ids[i] !== prefix[i]) return false;
  return true;
}

export async function auditTree(model: PolicyModel, tree: TurnTreeExport): Promise<RolloutAudit> {
  const byId = new Map(tree.turns.map((t) => [t.id, t]));
  const forkOf = new Map<string, NonNullable<TurnAudit["fork"]>>();
  const forks = { rewrite: 0, retry: 0, rerender: 0 };
  for (const c of tree.chains) {
    const kind = (c.evidence.fork as string | undefined) ?? c.label;
    if (kind !== "rewrite" && kind !== "retry" && kind !== "rerender") continue;
    forks[kind]++;
    forkOf.set(c.root, { from_chain: c.parent!, label: kind, evidence: c.evidence });
  }
  const split = { splitSpecialTokens: tree.rollout.split_special_tokens === true };
  // The rollout's own template settings over the gateway's, as its turns were rendered.
  model = await model.withTemplate((tree.rollout.template ?? {}) as Record<string, unknown>);
  const audits: TurnAudit[] = [];
  // The generation prompt's length at a turn: its history rendered with and without it.
  const generationPrompts = new Map<string, Promise<number>>();
  const generationPrompt = (p: TurnRecord) => {
    let n = generationPrompts.get(p.id);
    if (!n) {
      n = Promise.all([
        model.renderFull(p.messages, p.tools, true, split),
        model.renderFull(p.messages, p.tools, false, split),
      ]).then(([withPrompt, without]) => withPrompt.ids.length - without.ids.length);
      generationPrompts.set(p.id, n);
    }
    return n;
  };
  for (const t of tree.turns) {
    if (t.prompt_ids.length === 0) continue;
    const { ids } = await model.renderFull(t.messages, t.tools, true, split);
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
      special_text: t.special_text ?? [],
      malformed_tool_calls: t.malformed_tool_calls ?? 0,
      ...(forkOf.has(t.id) ? { fork: forkOf.get(t.id) } : {}),
    };
    if (diff >= 0) {
      const around = (xs: number[]) => model.decode(xs.slice(Math.max(0, diff - 8), diff + 8));
      const windows = await keptWindows(t, byId, generationPrompt);
      const differences = promptDifferences(t.prompt_ids, ids, windows);
      audit.first_difference = {
        position: diff,
        gateway: await around(t.prompt_ids),
        full_render: await around(ids),
        inside_sampled_output: windows.some((w) => diff >= w.start && diff < w.end),
      };
      audit.differences = await Promise.all(differences.map(async (d) => ({
        ...d,
        text: {
          gateway: await shown(model, t.prompt_ids, d.gateway),
          full_render: await shown(model, ids, d.full_render),
        },
      })));
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
  const retained = count((a) =>
    !a.equals_full_render && a.differences!.every((d) => d.turn !== null)
  );
  const extended = count((a) => a.extends_parent === true);
  const broken = count((a) => a.extends_parent === false);
  const id = String(tree.rollout.id);
  const specials = audits.reduce((n, a) => n + a.special_text.length, 0);
  return {
    rollout: id,
    turns: audits,
    forks,
    summary: `${id}: ${audits.length} turns; ${equal} equal a full render, ${retained} differ ` +
      `only inside earlier turns' generation prompts and kept sampled ids, ` +
      `${audits.length - equal - retained} differ elsewhere; ` +
      `${extended} extend their parent verbatim, ${broken} do not; ` +
      `${count((a) => a.drift !== null)} with drift; ` +
      `${audits.reduce((n, a) => n + a.malformed_tool_calls, 0)} malformed tool calls ` +
      `(in ${count((a) => a.malformed_tool_calls > 0)} turns, answered as text); ` +
      `${forks.rewrite} rewrite, ${forks.retry} retry forks; ${forks.rerender} rerender chains; ` +
      `${specials} special-token texts in content`,
  };
}

/** What drift means, printed wherever drift is reported. */
export const DRIFT_NOTE = "drift: a re-render of the sampled answer would give other ids; " +
  "the sampled ids are kept verbatim in later prompts, so the turn is on-policy and trained " +
  "(labels drift=mask gives it loss 0)";

/** Positions of special-token text, as `<|im_end|> at prompt[12] (message 3)`. */
export function describeSpecialText(hits: TurnAudit["special_text"]): string {
  const shown = hits.slice(0, 4).map((h) =>
    `${h.token} at ${
      h.position === null ? "(text)" : `prompt[${h.position}]`
    } (message ${h.message})`
  );
  return shown.join(", ") + (hits.length > 4 ? ", …" : "");
}

/** The audit as text: one line per turn (fork evidence under a fork's first turn), the summary. */
export function formatAudit(report: RolloutAudit): string {
  const lines: string[] = [];
  for (const t of report.turns) {
    const diff = t.first_difference;
    const special = t.special_text.length;
    lines.push(
      `${t.turn} [${t.branch}] prompt ${t.prompt_length}: ` +
        (t.equals_full_render ? "equals full render" : `differs at ${diff!.position}: ` +
          describeDifferences(t.differences ?? [])) +
        (t.extends_parent === null
          ? ""
          : t.extends_parent
          ? "; extends parent verbatim"
          : "; DOES NOT extend parent") +
        (t.drift ? `; drift at output[${t.drift.position}] (sampled ids kept)` : "") +
        (t.malformed_tool_calls
          ? `; ${t.malformed_tool_calls} malformed tool calls (answered as text)`
          : "") +
        (special
          ? `; ${special} special-token text${special > 1 ? "s" : ""} in content: ` +
            describeSpecialText(t.special_text)
          : ""),
    );
    if (t.fork) lines.push(`    ${describeFork(t.fork)}`);
  }
  if (report.turns.some((t) => t.drift)) lines.push(DRIFT_NOTE);
  lines.push(report.summary);
  return lines.join("\n");
}

const PLACES: Readonly<Record<PromptDifference["in"], string>> = {
  generation_prompt: "in the generation prompt of",
  sampled_ids: "in the kept sampled ids of",
  generation_prompt_and_sampled_ids: "across the generation prompt and kept sampled ids of",
  elsewhere: "ELSEWHERE (not inside any earlier turn's kept ids)",
};

/** Every difference of a turn, each with where it lies and both sides' text. */
function describeDifferences(differences: NonNullable<TurnAudit["differences"]>): string {
  const lines = differences.map((d) =>
    `\n    at ${d.gateway[0]} ${PLACES[d.in]}${d.turn === null ? "" : ` turn ${d.turn}`}` +
    `\n      gateway:     ${JSON.stringify(d.text.gateway)}` +
    `\n      full render: ${JSON.stringify(d.text.full_render)}`
  );
  return `${differences.length} difference${differences.length === 1 ? "" : "s"}` + lines.join("");
}

/** `rewrite of chain 0 after turn r.1.ab: message 4 (assistant) tool_calls[0]… "a" → "b"`. */
export function describeFork(fork: NonNullable<TurnAudit["fork"]>): string {
  const e = fork.evidence;
  const after = e.base_turn ? ` after turn ${e.base_turn}` : "";
  if (fork.label === "rerender") {
    const text = e.text as { recorded: string; rendered: string };
    return `rerender of chain ${fork.from_chain}${after}: the engine's render departs at ` +
      `prompt[${e.position}], in the ${e.in === "prompt" ? "prompt" : "sampled ids"} of turn ` +
      `${e.turn}: recorded ${JSON.stringify(text.recorded)} → rendered ` +
      `${JSON.stringify(text.rendered)}; a new sample from the engine's render`;
  }
  if (fork.label === "retry") {
    return `retry of chain ${fork.from_chain}${after}: the history of turn ${e.retried_turn}, ` +
      `from session ${e.session ?? "(none)"}; shared prefix trained in chain ${fork.from_chain}`;
  }
  return `rewrite of chain ${fork.from_chain}${after}: message ${e.message_index} ` +
    `(${e.role}) ${e.path}: recorded ${JSON.stringify(e.recorded)} → received ` +
    `${JSON.stringify(e.received)}; shared prefix trained in chain ${fork.from_chain}`;
}
