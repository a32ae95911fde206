/**
 * Reading an agent's request from where it departs from the last one. An agent re-sends its
 * whole history every turn, byte for byte the same up to what is new (a 128k-token history is
 * ~600 kB of JSON for a few new kB). So the gateway keeps, per rollout, what it needs of the last
 * request it read (a _lane_: a rollout may have a few, one per conversation it interleaves, such
 * as a sub-agent's): where each history element ends in its body, the SHA-256 of the body up to
 * each end (`prefix_digest.ts`; not the body: 32 bytes an element instead of ~2 kB), and where
 * those messages are in the rollout's tree. A new body with the same bytes up to an element end
 * is not parsed there: only what follows is (`JSON.parse` of the tail, or of the new elements alone when
 * the keys after the history are the last body's bytes; the protocol's conversion), and the turn
 * mounts from the known node (`KnownHistory`). Anything that does not line up (other bytes, a
 * changed protocol, tool set or system prompt, a scanner and parser that disagree) reads the whole
 * body as before; the result is the same request either way.
 *
 * Bounded: the lanes of all rollouts hold at most `budgetBytes` (their offsets and digests); past
 * it a request is read whole and not kept (the lanes kept stay: no thrashing under round-robin
 * load). A rollout's lanes go when it ends (`forget`).
 *
 * A body handed to `read` is this class's from then on, and freed before `read` returns (its
 * buffer detached, `freeBuffer`): left to the GC, bodies are external memory that only a major GC
 * frees (at 1,000 rollouts × 32k, ~280 MB between two major GCs; `docs/benchmarks.md`, issue 33).
 *
 * @module
 */
import type { CanonicalRequest, Message, ToolSpec } from "../../canonical/mod.ts";
import {
  ancestorAt,
  type HistoryNode,
  type KnownHistory,
  type Rollout,
  sameForm,
  sameMessage,
  type Turn,
  TurnTree,
} from "../../trajectory/mod.ts";
import { NativeMemoryTrim } from "../../model/mod.ts";
import { freeBuffer, parseJsonBody } from "../http/mod.ts";
import type { HistoryLayout, HistoryRead, ProtocolAdapter } from "../protocol.ts";
import { arrayElements, topLevelValue } from "./json_layout.ts";
import { digestEnds, digestOf, hashTo, matchEnds, sameDigest } from "./prefix_digest.ts";

/** Lanes one rollout keeps (a main conversation, sub-agents, a title request…). */
const LANES_PER_ROLLOUT = 4;

/** The key the tail's elements are parsed under: one no client sends (a nonce drawn at start). */
const TAIL_KEY = `\u0000tail:${crypto.randomUUID()}`;
const TAIL_OPEN = `{${JSON.stringify(TAIL_KEY)}:[`;

/** The default budget of the lanes: ~1.6 million history elements, 10,000 rollouts of 160. */
export const DEFAULT_KNOWN_PREFIX_BYTES = 64 * 1024 * 1024;

interface Lane {
  protocol: string;
  rootKey: string;
  /** The body's length in bytes. */
  length: number;
  /** Per history element: the offset after it in the body; `count` are valid. */
  ends: Int32Array;
  /** Per history element: the SHA-256 of the body up to its end (`prefix_digest.ts`). */
  digests: Uint8Array;
  /** Per history element: the canonical messages up to it (lead excluded), or -1. */
  made: Int32Array;
  count: number;
  lead: number;
  /** The body's keys before the history array, parsed. */
  head: Record<string, unknown>;
  /** Where the history array's `]` is in the body. */
  close: number;
  /** The body's keys after the history array, parsed (null: read whole, not parsed apart). */
  tail: Record<string, unknown> | null;
  /** The SHA-256 of the body from `close` on (with `tail`). */
  tailDigest: Uint8Array | null;
  /** The request's canonical messages in the tree's objects (the client's where it edited). */
  messages: Message[];
  /** The tools of the turn it was kept for (its root's interned array). */
  tools: ToolSpec[];
  history: HistoryNode;
  edits: Turn["historyEdits"];
}

/** A request read: what the route passes on, and how to keep its body for the next one. */
export interface PrefixRead {
  /** The wire body (its history holds only the elements read this time). */
  body: unknown;
  request: CanonicalRequest;
  /** Where the leading messages already are, when they were not parsed. */
  known?: KnownHistory;
  /** Keeps this body for the rollout's next request, once `turn` has it mounted. */
  keep(turn: Turn): void;
}

/** What the next lane is made of once the turn is mounted (nothing of the parsed request). */
interface LaneDraft {
  protocol: string;
  rootKey: string;
  length: number;
  ends: Int32Array;
  digests: Uint8Array;
  made: Int32Array;
  count: number;
  lead: number;
  head: Record<string, unknown>;
  close: number;
  tail: Record<string, unknown> | null;
  tailDigest: Uint8Array | null;
  /**
   * The request's messages, of which the first `known` are the tree's objects already (the rest
   * are replaced by the turn's once it is mounted); null: take them all from the turn.
   */
  messages: Message[] | null;
  known: number;
  /** Kept already (a second `keep` keeps nothing). */
  kept: boolean;
}

const decoder = new TextDecoder();

/** What a lane holds in bytes. */
function laneBytes(lane: Lane): number {
  return lane.ends.byteLength + lane.made.byteLength + lane.digests.byteLength;
}

function grown(array: Int32Array, length: number): Int32Array {
  if (array.length >= length) return array;
  const next = new Int32Array(Math.max(length, array.length * 2));
  next.set(array);
  return next;
}

/** How requests were read, since the start. */
export interface KnownPrefixStats {
  /** From a known prefix on (only the new elements parsed). */
  fromPrefix: number;
  /** Whole (a first request, a history that departs early, a protocol without a layout, …). */
  whole: number;
}

export class KnownPrefixes {
  readonly #lanes = new Map<Rollout, Lane[]>();
  #bytes = 0;
  readonly stats: KnownPrefixStats = { fromPrefix: 0, whole: 0 };

  constructor(readonly budgetBytes = DEFAULT_KNOWN_PREFIX_BYTES) {}

  /** Bytes the lanes hold now (offsets and digests). */
  get bytes(): number {
    return this.#bytes;
  }

  /** Drops a rollout's lanes (it ended). */
  forget(rollout: Rollout): void {
    for (const lane of [...this.#lanes.get(rollout) ?? []]) this.#take(rollout, lane);
  }

  /**
   * `bytes` read as `adapter`'s request for `rollout` (throws as `parseRequest` does for a body
   * that is not one). The bytes are this object's after: freed before it returns.
   */
  read(rollout: Rollout, adapter: ProtocolAdapter, url: URL, bytes: Uint8Array): PrefixRead {
    // The server's chunks of this body are native garbage of its size, which glibc keeps once
    // V8 frees them: they count toward the next `malloc_trim` as tokenized text does.
    void NativeMemoryTrim.shared().afterLargeBuffers(bytes.byteLength);
    try {
      return this.#read(rollout, adapter, url, bytes);
    } finally {
      freeBuffer(bytes);
    }
  }

  #read(rollout: Rollout, adapter: ProtocolAdapter, url: URL, bytes: Uint8Array): PrefixRead {
    const layout = adapter.history;
    if (layout) {
      for (const lane of this.#lanes.get(rollout) ?? []) {
        if (lane.protocol !== adapter.name) continue;
        const read = this.#fromLane(rollout, lane, layout, adapter, url, bytes);
        if (read) {
          this.stats.fromPrefix++;
          return read;
        }
      }
    }
    this.stats.whole++;
    const body = parseJsonBody(decoder.decode(bytes));
    const call = adapter.requestOf ? adapter.requestOf(url, body) : body;
    if (!layout) {
      return { body, request: adapter.parseRequest(call), keep: () => {} };
    }
    const read = layout.read(call);
    const draft = this.#bytes < this.budgetBytes ? this.#draft(adapter, layout, bytes, read) : null;
    return {
      body,
      request: read.request,
      keep: (turn) => draft && this.#keep(rollout, draft, turn),
    };
  }

  /** The request read from `lane`'s first elements on, or null where it does not line up. */
  #fromLane(
    rollout: Rollout,
    lane: Lane,
    layout: HistoryLayout,
    adapter: ProtocolAdapter,
    url: URL,
    bytes: Uint8Array,
  ): PrefixRead | null {
    const match = matchEnds(bytes, lane.ends, lane.digests, lane.count);
    let j = match.count;
    while (j > 0 && lane.made[j - 1] < 0) j--;
    if (j === 0) return null;
    const at = lane.ends[j - 1];
    const scan = arrayElements(bytes, at, true);
    if (!scan || scan.ends.length === 0) return null;
    // What follows the history (a system prompt, ~48 kB of tools) is most often the same bytes
    // as last time: only the new elements are parsed, with the last turn's tools array.
    const tailDigest = digestOf(bytes, scan.close);
    const sameTail = lane.tail !== null && lane.length - lane.close === bytes.length - scan.close &&
      sameDigest(lane.tailDigest!, tailDigest);
    let tail: Record<string, unknown>, elements: unknown;
    try {
      // The new elements begin with the comma after the last known one.
      if (sameTail) {
        const rest = decoder.decode(bytes.subarray(at, scan.close));
        elements = parseJsonBody(`[${rest.slice(rest.indexOf(",") + 1)}]`);
        tail = lane.tail!;
      } else {
        const rest = decoder.decode(bytes.subarray(at));
        tail = parseJsonBody(TAIL_OPEN + rest.slice(rest.indexOf(",") + 1)) as typeof tail;
        elements = tail[TAIL_KEY];
        delete tail[TAIL_KEY];
      }
    } catch {
      return null;
    }
    if (!Array.isArray(elements) || Object.hasOwn(tail, layout.field)) return null;
    const body = { ...lane.head, ...tail, [layout.field]: elements };
    let read: HistoryRead;
    try {
      read = layout.read(adapter.requestOf ? adapter.requestOf(url, body) : body);
    } catch {
      return null; // the whole body says what is wrong with it
    }
    const request = sameTail ? { ...read.request, tools: lane.tools } : read.request;
    if (
      read.lead !== lane.lead || read.ends.length !== scan.ends.length ||
      TurnTree.rootKey(request) !== lane.rootKey
    ) {
      return null;
    }
    for (let k = 0; k < read.lead; k++) {
      const was = lane.messages[k], now = request.messages[k];
      if (!sameMessage(was, now) || !sameForm(was, now)) return null;
    }
    // Lined up: the lane is this request's now (out of the cache, so no other request reuses it).
    this.#take(rollout, lane);
    const depth = lane.lead + lane.made[j - 1];
    // The lane's array becomes this request's messages, and then the next lane's.
    const messages = lane.messages;
    messages.length = depth;
    for (let k = read.lead; k < request.messages.length; k++) messages.push(request.messages[k]);
    const known: KnownHistory = {
      node: ancestorAt(lane.history, depth),
      edits: lane.edits.filter(([k]) => k < depth),
    };
    const count = j + scan.ends.length;
    const ends = grown(lane.ends, count), made = grown(lane.made, count);
    for (let k = 0; k < scan.ends.length; k++) {
      ends[j + k] = scan.ends[k];
      made[j + k] = read.ends[k] < 0 ? -1 : lane.made[j - 1] + read.ends[k];
    }
    // The digests up to `j` are this body's too (the same bytes); the new ones go on from there.
    const state = j === match.count ? match.state : hashTo(bytes, at);
    const digests = digestEnds(bytes, ends, j, count, lane.digests, state);
    const draft: LaneDraft = {
      ...lane,
      length: bytes.length,
      close: scan.close,
      tail,
      tailDigest,
      ends,
      digests,
      made,
      count,
      messages,
      known: depth,
      kept: false,
    };
    return {
      body,
      request: { ...request, messages },
      known,
      keep: (turn) => this.#keep(rollout, draft, turn),
    };
  }

  /** A lane for a body read whole: its history array's element ends, and the head's keys. */
  #draft(
    adapter: ProtocolAdapter,
    layout: HistoryLayout,
    bytes: Uint8Array,
    read: HistoryRead,
  ): LaneDraft | null {
    const open = topLevelValue(bytes, layout.field);
    if (open === null || bytes[open] !== 0x5b) return null;
    const scan = arrayElements(bytes, open + 1, false);
    if (!scan || scan.ends.length === 0 || scan.ends.length !== read.ends.length) return null;
    let head: Record<string, unknown>;
    try {
      head = JSON.parse(`${decoder.decode(bytes.subarray(0, open + 1))}]}`);
    } catch {
      return null;
    }
    delete head[layout.field];
    const ends = Int32Array.from(scan.ends);
    return {
      protocol: adapter.name,
      rootKey: TurnTree.rootKey(read.request),
      length: bytes.length,
      ends,
      digests: digestEnds(bytes, ends, 0, ends.length, new Uint8Array(0)),
      made: Int32Array.from(read.ends),
      count: scan.ends.length,
      lead: read.lead,
      head,
      close: scan.close,
      tail: null,
      tailDigest: null,
      messages: null,
      known: 0,
      kept: false,
    };
  }

  /** Keeps `draft` as a lane of `rollout`, with the history `turn` mounted (a new turn only). */
  #keep(rollout: Rollout, draft: LaneDraft, turn: Turn): void {
    const depth = draft.lead + draft.made[draft.count - 1];
    // A retry answers an earlier turn, whose edits are its own request's; a message count that
    // does not add up means the lane would not describe this history; and a second `keep` of
    // one draft keeps nothing more.
    if (
      draft.kept || turn.retries > 0 || draft.made[draft.count - 1] < 0 ||
      turn.history.depth !== depth
    ) {
      return;
    }
    draft.kept = true;
    if (!draft.messages) {
      // Read whole (its cost is the history's already): lanes of an earlier state of this
      // conversation, whose history this one extends, will not be matched again.
      for (const lane of [...this.#lanes.get(rollout) ?? []]) {
        if (
          lane.protocol === draft.protocol &&
          ancestorAt(turn.history, lane.history.depth) === lane.history
        ) {
          this.#take(rollout, lane);
        }
      }
    }
    const lanes = this.#lanes.get(rollout) ?? [];
    if (lanes.length >= LANES_PER_ROLLOUT) this.#take(rollout, lanes.at(-1)!);
    let messages: Message[];
    if (draft.messages) {
      // The known part is the tree's already; the rest from the turn's path, edits as sent (the
      // request's own objects are garbage then: the runner is done with them).
      messages = draft.messages;
      const from = draft.known;
      for (let n: HistoryNode | null = turn.history; n && n.depth > from; n = n.parent) {
        messages[n.depth - 1] = n.message!;
      }
      for (const [k, m] of turn.historyEdits) if (k >= from) messages[k] = m;
    } else messages = turn.messages;
    const { known: _, kept: __, ...fields } = draft;
    const lane: Lane = {
      ...fields,
      messages,
      tools: turn.tools,
      history: turn.history,
      edits: turn.historyEdits,
    };
    const size = laneBytes(lane);
    if (this.#bytes + size > this.budgetBytes) return;
    this.#bytes += size;
    this.#lanes.set(rollout, [lane, ...(this.#lanes.get(rollout) ?? [])]);
  }

  /** Drops `lane`. */
  #take(rollout: Rollout, lane: Lane): void {
    const lanes = this.#lanes.get(rollout);
    const i = lanes?.indexOf(lane) ?? -1;
    if (i < 0) return;
    lanes!.splice(i, 1);
    this.#bytes -= laneBytes(lane);
    if (lanes!.length === 0) this.#lanes.delete(rollout);
  }
}
