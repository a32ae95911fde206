/**
 * A saved tree export (`GET /api/rollouts/:id/tree`) read back into a {@link Rollout}, so what
 * works on a live rollout (samples, the viewer) works on a file. Each turn's full `prompt_ids`
 * are checked to extend its parent's prompt and output, then only the ids the turn added are
 * kept, as a live turn holds them.
 *
 * @example
 * ```ts
 * import { rolloutFromTree, type TurnTreeExport } from "../mod.ts";
 * const tree = JSON.parse(await Deno.readTextFile("tree.json")) as TurnTreeExport;
 * const samples = rolloutFromTree(tree).samples();
 * ```
 *
 * @module
 */
import type { Protocol } from "../../canonical/mod.ts";
import type { BranchLabel } from "../chains/mod.ts";
import { TurnTree } from "../tree/mod.ts";
import { Rollout, type RolloutSampling } from "../rollout.ts";
import {
  type MountKind,
  newTurn,
  noIds,
  placeOutput,
  placePrompt,
  type Turn,
  type TurnStatus,
} from "../turn.ts";
import type { TurnRecord, TurnTreeExport } from "./tree_export.ts";

/** A file that is not a well-formed tree export. */
export class TreeImportError extends Error {
  override name = "TreeImportError";
}

function importTurn(rec: TurnRecord, parent: Turn | null, rollout: Rollout): Turn {
  const protocol = (rec.protocol ?? "chat") as Protocol;
  // Histories hang in the rollout's message tree, shared between turns, as on a live rollout.
  const key = TurnTree.rootKey({ protocol, tools: rec.tools });
  const mount = rollout.tree.mount(rec.messages, key);
  let start = 0;
  if (parent) {
    const parentIds = parent.ids.outputEnd;
    start = parentIds + rec.bridge_ids.length;
    // Failed turns may hold no prompt at all; anything else must extend its parent verbatim.
    if (rec.prompt_ids.length > 0) {
      if (rec.prompt_ids.length < start) {
        throw new TreeImportError(`turn ${rec.id} is shorter than its parent ${parent.id}`);
      }
      const previous = parent.ids.line.view(0, parentIds);
      for (let i = 0; i < parentIds; i++) {
        if (rec.prompt_ids[i] !== previous[i]) {
          throw new TreeImportError(
            `turn ${rec.id} does not extend its parent ${parent.id} (id ${i} differs)`,
          );
        }
      }
    }
  }
  const turn = newTurn({
    id: rec.id,
    index: rec.index,
    rolloutId: rollout.id,
    protocol,
    parent,
    mount: rec.mount as MountKind,
    chain: rec.chain,
    retries: rec.retries,
    session: rec.session ?? null,
    next: null,
    specialText: rec.special_text ?? [],
    drift: rec.drift,
    ...(rec.black_box ? { blackBox: true as const } : {}),
    toolSpans: rec.tool_spans,
    images: rec.images ?? [],
    history: mount.node,
    historyEdits: mount.edits,
    tools: rollout.tree.internTools(key, rec.tools),
    renderedMessages: rec.rendered_messages,
    ids: noIds(),
    promptLength: rec.prompt_ids.length,
    maxTokens: 0,
    logprobs: rec.logprobs ? Float64Array.from(rec.logprobs) : null,
    ...(rec.finish_reason ? { finishReason: rec.finish_reason as Turn["finishReason"] } : {}),
    ...(rec.weight_version !== null ? { weightVersion: rec.weight_version } : {}),
    ...(rec.facts ? { facts: rec.facts } : {}),
    ...(rec.answer ? { message: rec.answer } : {}),
    malformedToolCalls: rec.malformed_tool_calls,
    status: rec.status as TurnStatus,
    ...(rec.error !== null ? { error: rec.error } : {}),
    result: Promise.reject(new Error("an imported turn has no live answer")),
    timings: rec.timings,
  });
  turn.result.catch(() => {});
  if (rec.prompt_ids.length > 0) {
    placePrompt(turn, parent ? rec.bridge_ids : [], rec.prompt_ids.slice(start));
  }
  placeOutput(turn, rec.output_ids);
  const promptNode = rollout.tree.attach(mount, rec.messages, turn);
  turn.history = promptNode;
  if (turn.status === "done" && turn.message) rollout.tree.recordAnswer(promptNode, turn);
  return turn;
}

/** The rollout a tree export was taken from, with its turns, chains and labels. */
export function rolloutFromTree(tree: TurnTreeExport): Rollout {
  if (tree?.format !== "rollgate.tree.v1" || !Array.isArray(tree.turns)) {
    throw new TreeImportError("not a rollgate tree export (format rollgate.tree.v1)");
  }
  const r = tree.rollout as Record<string, unknown>;
  const rollout = new Rollout(
    String(r.id),
    "",
    (r.metadata ?? {}) as Record<string, unknown>,
    (r.sampling ?? {}) as RolloutSampling,
    (r.backend as string | null) ?? undefined,
    {},
    r.split_special_tokens === true,
    (r.template ?? {}) as Record<string, unknown>,
  );
  rollout.createdAt = (r.created_at as number) ?? rollout.createdAt;
  rollout.hostCalls.push(...((r.host_calls ?? []) as Rollout["hostCalls"]));
  rollout.agentExit = (r.agent_exit ?? null) as Rollout["agentExit"];
  if (r.turn_rewards && typeof r.turn_rewards === "object") {
    rollout.turnRewards = new Map(Object.entries(r.turn_rewards as Record<string, number>));
  }
  if (r.status === "finished") {
    rollout.finish((r.reward as number | null) ?? null);
    rollout.finishedAt = (r.finished_at as number | null) ?? undefined;
  }
  const byId = new Map<string, Turn>();
  for (const rec of [...tree.turns].sort((a, b) => a.index - b.index)) {
    const parent = rec.parent === null ? null : byId.get(rec.parent);
    if (parent === undefined) {
      throw new TreeImportError(`turn ${rec.id} names an unknown parent ${rec.parent}`);
    }
    const turn = importTurn(rec, parent, rollout);
    // A chain is a line: its live turn continuing the parent is the parent's `next`.
    if (parent && parent.chain === turn.chain && turn.status !== "failed") parent.next = turn;
    byId.set(turn.id, turn);
    rollout.turns.push(turn);
  }
  for (const c of tree.chains) {
    const root = byId.get(c.root);
    if (!root) throw new TreeImportError(`chain ${c.id} names an unknown root ${c.root}`);
    const latest = rollout.turns.findLast((t) => t.chain === c.id) ?? root;
    rollout.chains[c.id] = {
      id: c.id,
      label: c.label as BranchLabel,
      root,
      parent: c.parent,
      evidence: c.evidence,
      latest,
    };
  }
  return rollout;
}
