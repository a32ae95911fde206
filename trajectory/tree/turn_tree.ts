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
import type { Message, ToolSpec } from "../../canonical/mod.ts";
import { identicalJson, sameForm, sameMessage } from "./same_message.ts";
import { type HistoryEdits, type HistoryNode, historyOf, type Turn } from "../turn.ts";

/** What an empty list of a node reads as (never written: nodes add with their methods). */
const NONE: never[] = Object.freeze([]) as never[];

export class MessageNode {
  /**
   * Its number in the tree, in order of creation from 1 (a root is 0). Nodes are created only
   * when a turn is registered or recorded, so replaying a rollout's journal numbers them the same.
   */
  id = 0;
  // Made on first use, one element long: most nodes have one child and one turn or none, and a
  // tree holds a node per message of every rollout (an empty `[]` that grows costs ~150 bytes).
  #children?: MessageNode[];
  #promptOf?: Turn[];
  #sampledBy?: Turn[];
  constructor(
    readonly message: Message | null,
    readonly parent: MessageNode | null,
    readonly depth: number,
  ) {}

  get children(): MessageNode[] {
    return this.#children ?? NONE;
  }
  /** Turns whose request history ends at this node. */
  get promptOf(): readonly Turn[] {
    return this.#promptOf ?? NONE;
  }
  /**
   * The turns that sampled this (assistant) message, first first: the base of later requests
   * (of their own client session when one sampled it, else the first).
   */
  get sampledBy(): readonly Turn[] {
    return this.#sampledBy ?? NONE;
  }

  addChild(node: MessageNode): void {
    if (this.#children) this.#children.push(node);
    else this.#children = [node];
  }
  addPromptOf(turn: Turn): void {
    if (this.#promptOf) this.#promptOf.push(turn);
    else this.#promptOf = [turn];
  }
  addSampledBy(turn: Turn): void {
    if (this.#sampledBy) this.#sampledBy.push(turn);
    else this.#sampledBy = [turn];
  }

  child(m: Message): MessageNode | undefined {
    for (const c of this.children) if (sameMessage(c.message!, m)) return c;
    return undefined;
  }
}

/**
 * Where a request's leading messages already are in the tree (the gateway read them from bytes
 * it had seen): the node their path ends at, and which of them the client sent in another form.
 */
export interface KnownHistory {
  node: HistoryNode;
  /** Edits (as `Turn.historyEdits`) with an index below `node.depth`. */
  edits: HistoryEdits;
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

/** Each tools array's root key (tools are not changed once read). */
const ROOT_KEYS = new WeakMap<readonly ToolSpec[], { protocol: string; key: string }>();

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
   * Made once per tools array and protocol (a turn asks three times, and Claude Code's tools
   * are ~48 kB of JSON); the same string each time, so its hash as a map key is kept too.
   */
  static rootKey(req: { protocol: string; tools: readonly ToolSpec[] }): string {
    const made = ROOT_KEYS.get(req.tools);
    if (made?.protocol === req.protocol) return made.key;
    const key = `${req.protocol}\u0000${TurnTree.toolsKey(req.tools)}`;
    ROOT_KEYS.set(req.tools, { protocol: req.protocol, key });
    return key;
  }

  /**
   * Walks `messages` down from the root of `toolsKey`. A client `session` (when the request
   * carries one) scopes retries: only a turn of the same session is replayed, and a sampled
   * answer of the same session is preferred as the base.
   *
   * `known` says where the leading messages already are (a request read from a known prefix,
   * whose first `known.node.depth` messages are that node's path): the walk starts there.
   */
  mount(
    messages: readonly Message[],
    toolsKey: string,
    session?: string | null,
    known?: KnownHistory,
  ): Mount {
    let root = this.#roots.get(toolsKey);
    if (!root) this.#roots.set(toolsKey, root = new MessageNode(null, null, 0));
    const from = known?.node instanceof MessageNode ? known.node : undefined;
    let node: MessageNode = from ?? root;
    let i = node.depth;
    const edits: (readonly [number, Message])[] = from ? [...known!.edits] : [];
    for (; i < messages.length; i++) {
      const next: MessageNode | undefined = node.child(messages[i]);
      if (!next) break;
      node = next;
      if (!sameForm(next.message!, messages[i])) edits.push([i, messages[i]]);
    }
    // The base is the deepest sampled answer on the matched path: walking up, the first one.
    let base: Turn | null = null, baseDepth = 0;
    for (let n: MessageNode | null = node; n && n !== root; n = n.parent) {
      const sampled = n.sampledBy.length ? pickSampled(n.sampledBy, session) : undefined;
      if (sampled) {
        base = sampled;
        baseDepth = n.depth;
        break;
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
      node.addChild(created);
      node = created;
    }
    node.addPromptOf(turn);
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
    if (!existing) promptNode.addChild(node);
    // A later identical answer does not replace the first (histories already mount there); it is
    // the base of its own session's requests.
    node.addSampledBy(turn);
  }
}
