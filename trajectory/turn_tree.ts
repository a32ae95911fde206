/**
 * The per-rollout message tree: one node per message, shared by every request whose history
 * passes through it. A request mounts at the deepest node its history matches; the deepest
 * sampled assistant message on that path is the turn its prompt extends.
 *
 * Matching walks the incoming history once, comparing each message with the few children of the
 * current node (`sameMessage`), so mounting costs one pass of string comparisons and never
 * re-serializes or re-tokenizes the history.
 *
 * @module
 */
import type { Message, ToolSpec } from "../canonical/mod.ts";
import { identicalJson, sameForm, sameMessage } from "./same_message.ts";
import { type HistoryEdits, historyOf, type Turn } from "./turn.ts";

export class MessageNode {
  /**
   * Its number in the tree, in order of creation from 1 (a root is 0). Nodes are created only
   * when a turn is registered or recorded, so replaying a rollout's journal numbers them the same.
   */
  id = 0;
  readonly children: MessageNode[] = [];
  /** Turns whose request history ends at this node. */
  readonly promptOf: Turn[] = [];
  /**
   * The turns that sampled this (assistant) message, first first: the base of later requests
   * (of their own client session when one sampled it, else the first).
   */
  readonly sampledBy: Turn[] = [];
  constructor(
    readonly message: Message | null,
    readonly parent: MessageNode | null,
    readonly depth: number,
  ) {}

  child(m: Message): MessageNode | undefined {
    return this.children.find((c) => sameMessage(c.message!, m));
  }
}

export interface Mount {
  /** The turn whose prompt + output the history extends, or null. */
  base: Turn | null;
  /** Number of leading messages covered by `base` (its history + its sampled answer). */
  baseDepth: number;
  /** A recorded turn with exactly this history: the request is a retry of it. */
  retryOf: Turn | null;
  /** Deepest node the history reached. */
  node: MessageNode;
  /** Number of leading messages matched. */
  matched: number;
  /** Matched messages the request sent in another form than the tree's (see `Turn`). */
  edits: HistoryEdits;
}

/** The first done turn, or the first of the client's own session when there is one. */
function pickSampled(turns: readonly Turn[], session?: string | null): Turn | undefined {
  let first: Turn | undefined;
  for (const t of turns) {
    if (t.status !== "done") continue;
    if (session && t.session === session) return t;
    first ??= t;
  }
  return first;
}

export class TurnTree {
  /** One root per tool set: a prompt with other tools renders differently from its first token. */
  readonly #roots = new Map<string, MessageNode>();
  /** One tools array per root: every turn under it references the same one. */
  readonly #tools = new Map<string, ToolSpec[]>();
  /** Every node but the roots, by id - 1. */
  readonly #nodes: MessageNode[] = [];

  static toolsKey(tools: readonly ToolSpec[]): string {
    return JSON.stringify(
      tools.map((t) => [t.name, t.kind, t.description ?? null, t.parameters ?? null]),
    );
  }
  /**
   * The root a request mounts under: its protocol and tools. One protocol per root, so an
   * identical history sent over another protocol is not replayed with the first one's ids.
   */
  static rootKey(req: { protocol: string; tools: readonly ToolSpec[] }): string {
    return `${req.protocol}\u0000${TurnTree.toolsKey(req.tools)}`;
  }

  /**
   * Walks `messages` down from the root of `toolsKey`. A client `session` (when the request
   * carries one) scopes retries: only a turn of the same session is replayed, and a sampled
   * answer of the same session is preferred as the base.
   */
  mount(messages: readonly Message[], toolsKey: string, session?: string | null): Mount {
    let root = this.#roots.get(toolsKey);
    if (!root) this.#roots.set(toolsKey, root = new MessageNode(null, null, 0));
    let node: MessageNode = root;
    let base: Turn | null = null, baseDepth = 0, i = 0;
    const edits: [number, Message][] = [];
    for (; i < messages.length; i++) {
      const next: MessageNode | undefined = node.child(messages[i]);
      if (!next) break;
      node = next;
      if (!sameForm(next.message!, messages[i])) edits.push([i, messages[i]]);
      const sampled = next.sampledBy.length ? pickSampled(next.sampledBy, session) : undefined;
      if (sampled) {
        base = sampled;
        baseDepth = i + 1;
      }
    }
    const live = i === messages.length
      ? node.promptOf.findLast((t) =>
        t.status !== "failed" && (!session || t.session === session)
      ) ??
        null
      : null;
    return { base, baseDepth, retryOf: live, node, matched: i, edits };
  }

  /** `tools`, or the identical array an earlier turn under the same root brought. */
  internTools(toolsKey: string, tools: ToolSpec[]): ToolSpec[] {
    const known = this.#tools.get(toolsKey);
    if (known && identicalJson(known, tools)) return known;
    if (!known) this.#tools.set(toolsKey, tools);
    return tools;
  }

  /** Adds the unmatched tail of `messages` below the mount point and records `turn` there. */
  attach(mount: Mount, messages: readonly Message[], turn: Turn): MessageNode {
    let node = mount.node;
    for (let i = mount.matched; i < messages.length; i++) {
      const created = this.#number(new MessageNode(messages[i], node, node.depth + 1));
      node.children.push(created);
      node = created;
    }
    node.promptOf.push(turn);
    return node;
  }

  /** The node numbered `id` (see {@link MessageNode.id}). */
  node(id: number): MessageNode | undefined {
    return this.#nodes[id - 1];
  }

  /** The messages from the root down to `node`. */
  static pathTo(node: MessageNode): Message[] {
    return historyOf(node);
  }

  #number(node: MessageNode): MessageNode {
    this.#nodes.push(node);
    node.id = this.#nodes.length;
    return node;
  }

  /** Hangs the turn's sampled answer below its prompt node. */
  recordAnswer(promptNode: MessageNode, turn: Turn): void {
    const existing = promptNode.child(turn.message!);
    const node = existing ??
      this.#number(new MessageNode(turn.message!, promptNode, promptNode.depth + 1));
    if (!existing) promptNode.children.push(node);
    // A later identical answer does not replace the first (histories already mount there); it is
    // the base of its own session's requests.
    node.sampledBy.push(turn);
  }
}
