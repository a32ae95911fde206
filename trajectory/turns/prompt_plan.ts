/**
 * A turn's prompt, planned: the mounted base turn's exact ids + the rendered delta (bridge and
 * delta ids), or a full render for a new chain, with where the tool outputs and special-token text
 * fall. A pure function of (model, mount, request): nothing is recorded, nothing else is read.
 *
 * The plan is taken in two steps so that a waiting turn holds nothing of its request:
 * {@link promptWork} keeps only what rendering needs (the new messages and the tools), and the
 * request's parsed history (most of it already in the tree) is garbage while
 * {@link planPrompt} awaits the tokenizer.
 *
 * @module
 */
import type { CanonicalRequest, ImageRef, Message } from "../../canonical/mod.ts";
import type { DeltaHistory, PolicyModel, Rendered } from "../../model/mod.ts";
import { ancestorAt, type HistoryNode, type Turn, type TurnImage } from "../turn.ts";
import type { Mount } from "../tree/mod.ts";
import type { Rerender } from "../chains/mod.ts";
import { findToolSpans } from "./tool_spans.ts";

/**
 * What rendering a turn's prompt needs of its request: the new messages alone when it extends a
 * recorded turn (a delta), the whole history for a new chain or when the engine renders.
 */
export interface PromptWork {
  base: Turn | null;
  /** How many messages of the history come before the new ones (the base's history and answer). */
  baseDepth: number;
  /** The new messages, or the whole history (`promptWork`). */
  messages: Message[];
  tools: CanonicalRequest["tools"];
  history?: DeltaHistory;
  splitSpecialTokens: boolean;
}

/** A turn's prompt ids and what the turn records about them. */
export interface PromptPlan {
  bridgeIds: number[];
  deltaIds: number[];
  promptLength: number;
  renderedMessages: number;
  toolSpans: Turn["toolSpans"];
  specialText: Turn["specialText"];
  /** The engine's render does not extend the base's ids: the turn starts a `rerender` chain. */
  rerender?: Rerender;
  images: Turn["images"];
}

/**
 * What of `req` (mounted at `mount`) its prompt needs; `rendersInFull` (an engine renders):
 * the whole history every turn.
 */
export function promptWork(
  mount: Mount,
  req: CanonicalRequest,
  splitSpecialTokens: boolean,
  rendersInFull = false,
): PromptWork {
  const { base, baseDepth } = mount;
  const delta = base !== null && !rendersInFull;
  return {
    base,
    baseDepth,
    messages: delta ? req.messages.slice(baseDepth) : req.messages,
    tools: req.tools,
    history: delta ? callsAbove(ancestorAt(mount.node, baseDepth)) : undefined,
    splitSpecialTokens,
  };
}

/** Renders the prompt `work` describes with `model`'s template and tokenizer. */
export async function planPrompt(model: PolicyModel, work: PromptWork): Promise<PromptPlan> {
  const { base, messages, tools } = work;
  const options = { splitSpecialTokens: work.splitSpecialTokens };
  if (!base) {
    const rendered = await model.renderFull(messages, tools, true, options);
    return {
      bridgeIds: [],
      deltaIds: rendered.ids,
      promptLength: rendered.ids.length,
      renderedMessages: messages.length,
      toolSpans: toolSpans(model, rendered, messages, 0),
      specialText: rendered.specialText,
      images: turnImages(rendered, messages, 0),
    };
  }
  const rendered = await model.renderDeltaIds(messages, tools, options, work.history);
  const { bridgeIds, deltaIds } = await model.joinTurn(Array.from(base.outputIds), rendered.ids);
  // Positions in the whole prompt: after the base's prompt, its output and the bridge, less
  // the leading ids the join shared with the output (GLM's role marker).
  const offset = base.promptLength + base.outputIds.length + bridgeIds.length;
  const shared = rendered.ids.length - deltaIds.length;
  return {
    bridgeIds,
    deltaIds,
    promptLength: offset + deltaIds.length,
    renderedMessages: messages.length,
    toolSpans: toolSpans(
      model,
      {
        ...rendered,
        ids: deltaIds,
        toolOutputs: rendered.toolOutputs?.map((o) => ({
          start: o.start - shared,
          end: o.end - shared,
        })),
      },
      messages,
      bridgeIds.length,
    ),
    specialText: rendered.specialText.map((hit) => ({
      ...hit,
      message: hit.message + work.baseDepth,
      position: hit.position === null ? null : hit.position - shared + offset,
    })),
    images: turnImages(rendered, messages, bridgeIds.length - shared),
  };
}

/** The rendered images' pads, moved by `offset` into the turn's context ids, with their images. */
function turnImages(rendered: Rendered, messages: readonly Message[], offset: number): TurnImage[] {
  if (!rendered.images?.length) return [];
  const refs: ImageRef[] = messages.flatMap((m) =>
    m.role === "user" || m.role === "tool" ? (m.images ?? []).map((i) => i.image) : []
  );
  return rendered.images.map((span, k) => ({
    ...refs[k],
    start: span.start + offset,
    end: span.end + offset,
  }));
}

/** Where `rendered`'s tool outputs lie (for `messages`, the rendered ones), shifted by `offset`. */
export function toolSpans(
  model: PolicyModel,
  rendered: Rendered,
  messages: readonly Message[],
  offset: number,
): Turn["toolSpans"] {
  const outputs = messages.flatMap((m) => (m.role === "tool" ? [m] : []));
  if (rendered.toolOutputs) {
    return rendered.toolOutputs.map((s, k) => ({
      start: s.start + offset,
      end: s.end + offset,
      tool_call_id: outputs[k]?.tool_call_id ?? "",
    }));
  }
  const markers = model.toolResponseMarkers;
  if (!markers) return [];
  const callIds = outputs.map((m) => m.tool_call_id);
  return findToolSpans(rendered.ids, markers, callIds).map((s, k) => ({
    ...s,
    start: s.start + offset,
    // An empty output leaves only the template's two newlines (merged into one token).
    end: (outputs[k]?.content === "" ? s.start : s.end) + offset,
  }));
}

/**
 * The tool calls a delta's tool results answer, looked up in the message tree upwards from where
 * the delta starts and no further than the last user message (results follow their calls), so a
 * lookup costs what it reads, not the history, and needs nothing of the request's own copy.
 */
function callsAbove(node: HistoryNode): DeltaHistory {
  const find = (id: string) => {
    for (
      let n: HistoryNode | null = node;
      n?.message && n.message.role !== "user";
      n = n.parent
    ) {
      const m = n.message;
      const calls = m.role === "assistant" ? m.tool_calls ?? [] : [];
      const index = calls.findIndex((c) => c.id === id);
      if (index >= 0) return { call: calls[index], index, count: calls.length };
    }
    return undefined;
  };
  return {
    toolCall: (id) => find(id)?.call,
    callPosition(id) {
      const found = find(id);
      return found && { index: found.index, count: found.count };
    },
  };
}
