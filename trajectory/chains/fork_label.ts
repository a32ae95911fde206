/**
 * Forks inside a recorded chain. A chain is a line of turns; when a request extends a turn that
 * another live turn of its chain already continues, the new turn starts a chain of its own, so
 * that the shared prefix stays trained in one sample only (the chain that recorded it first):
 *
 * - `retry`: the history is one the rollout already recorded, sent again by another client
 *   session (a second CLI run whose first request equals the first run's): a fresh sample of the
 *   same prompt, not a replay.
 * - `rewrite`: the history departs from the chain after a recorded turn: the client edited,
 *   dropped or re-encoded a message the chain holds (Claude Code 2.1.330 decodes `\uXXXX` escape
 *   text inside tool-input strings when it sends a tool call back). The evidence names the first
 *   differing message and field, with both sides decoded.
 *
 * - `rerender` (engine-rendered prompts only, the `engine` family): the history extends a
 *   recorded turn, but the engine's render of it does not extend that turn's prompt and output
 *   (the template dropped old reasoning, wrote a sampled answer otherwise). The turn starts a new
 *   chain from the engine's render, sharing nothing: the chain it continues ends at that turn's
 *   base and keeps its sample. The evidence says where the two first differ.
 *
 * A fork of a `side` chain stays `side` (the evidence says which fork it is), so a label policy
 * that drops side requests drops their forks too.
 *
 * @module
 */
import type { Message } from "../../canonical/mod.ts";
import type { Chain } from "./branch_label.ts";
import { messageChange, type Mount } from "../tree/mod.ts";
import type { Turn } from "../turn.ts";

type Fork = Pick<Chain, "label" | "parent" | "evidence">;

function sideOr(of: Chain, fork: Fork): Fork {
  return of.label === "side"
    ? { ...fork, label: "side", evidence: { ...fork.evidence, fork: fork.label } }
    : fork;
}

/** Where an engine's render departs from the chain's ids: the evidence of a `rerender` chain. */
export interface Rerender {
  reason: string;
  /** The turn whose prompt + output the render should have extended. */
  base_turn: string;
  /** First index where the render and the chain's ids differ (or where the render ends). */
  position: number;
  /** The turn of the chain whose ids hold that position. */
  turn: string;
  /** Which of its ids: its prompt (what was rendered for it) or what it sampled. */
  in: "prompt" | "sampled_ids";
  /** From `position` on, a few of the chain's ids and of the render's. */
  recorded: number[];
  rendered: number[];
  /** Their text, decoded. */
  text: { recorded: string; rendered: string };
}

/**
 * The label of a turn that continues `of` from the engine's render, which departs from the
 * chain's ids as `rerender` says.
 */
export function rerenderFork(of: Chain, rerender: Rerender): Fork {
  return sideOr(of, {
    label: "rerender",
    parent: of.id,
    // What the conversation was before any rerender (`main`, `subagent`, …).
    evidence: { ...rerender, continues: of.evidence.continues ?? of.label },
  });
}

/**
 * The label of a turn whose history equals that of `twin`, a live turn another client session
 * sent (with `base`, the sampled turn both extend, or null for chain roots).
 */
export function retryFork(turn: Turn, twin: Turn, of: Chain, base: Turn | null): Fork {
  return sideOr(of, {
    label: "retry",
    parent: of.id,
    evidence: {
      reason: "the history of a recorded turn, sampled afresh for another client session",
      retried_turn: twin.id,
      ...(base ? { base_turn: base.id } : {}),
      session: turn.session,
      retried_session: twin.session,
    },
  });
}

/**
 * The label of a turn that extends `base` although `next` (a live turn of the same chain)
 * already continues it, or (`base` null) that replaces the answer of `next`, its chain's turn.
 * The evidence compares the history with the recorded ones where it left the tree:
 * `mount.matched` messages matched, the next one is the change.
 */
export function rewriteFork(
  /** The new turn's request history. */
  messages: readonly Message[],
  base: Turn | null,
  next: Turn,
  of: Chain,
  mount: Mount,
): Fork {
  const received = messages[mount.matched];
  // The turn is already attached: its own messages are not a recorded continuation.
  const children = mount.node.children.filter((c) => c.message !== received);
  // Several recorded continuations may leave that node: show one of the received message's role.
  const recorded = (children.find((c) => c.message!.role === received?.role) ?? children[0])
    ?.message ?? undefined;
  return sideOr(of, {
    label: "rewrite",
    parent: of.id,
    evidence: {
      reason: "the history departs from the chain after a recorded turn",
      ...(base ? { base_turn: base.id } : {}),
      replaced_turn: next.id,
      ...messageChange(mount.matched, recorded, received),
    },
  });
}
