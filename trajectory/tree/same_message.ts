/**
 * Semantic equality of canonical messages: the rule that decides whether a client's re-sent
 * history is the history the gateway recorded.
 *
 * Wire details are gone after conversion (`cache_control`, block vs string, item ids), so what
 * is left to tolerate is tool arguments: pi re-serializes them and Codex may reorder keys, so
 * they compare as parsed JSON, with keys in any order and `null` members treated as absent.
 * Ids (`tool_call_id`, tool-call ids) compare verbatim, and so do images: by hash and place.
 *
 * @module
 */
import type { ContentImage, Message, ToolCall } from "../../canonical/mod.ts";

/**
 * Pairs of JSON values still to compare, shared by every comparison (one runs at a time): the
 * walks below keep their own stack, so a value nested thousands of levels deep (a tool's
 * arguments are whatever the policy wrote) compares like any other, never overflowing the call
 * stack, and a shallow one allocates nothing.
 */
const pairs: unknown[] = [];

/**
 * Compares `a` and `b` pair by pair; `children` checks one pair of objects (both non-null, both
 * arrays or both not) and pushes the pairs of their members, or says they differ.
 */
function walkEqual(
  a: unknown,
  b: unknown,
  objects: (x: Record<string, unknown>, y: Record<string, unknown>) => boolean,
): boolean {
  const base = pairs.length;
  pairs.push(a, b);
  try {
    while (pairs.length > base) {
      const y = pairs.pop(), x = pairs.pop();
      if (x === y) continue;
      if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) return false;
      const array = Array.isArray(x);
      if (array !== Array.isArray(y)) return false;
      if (array) {
        const xs = x as unknown[], ys = y as unknown[];
        if (xs.length !== ys.length) return false;
        for (let i = 0; i < xs.length; i++) pairs.push(xs[i], ys[i]);
      } else if (!objects(x as Record<string, unknown>, y as Record<string, unknown>)) {
        return false;
      }
    }
    return true;
  } finally {
    pairs.length = base;
  }
}

/** Members of two objects, any key order, `null` members absent. */
function looseMembers(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  let n = 0;
  for (const k in a) {
    if (a[k] === null) continue;
    if (!(k in b)) return false;
    n++;
    pairs.push(a[k], b[k]);
  }
  for (const k in b) if (b[k] !== null) n--;
  return n === 0;
}

/** Deep equality of JSON values; object key order and `null` members do not matter. */
export function sameJson(a: unknown, b: unknown): boolean {
  return a === b || walkEqual(a, b, looseMembers);
}

function parseOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { __unparsed: text };
  }
}

function sameArguments(a: string, b: string): boolean {
  return a === b || sameJson(parseOr(a), parseOr(b));
}

function sameToolCalls(a: ToolCall[] | undefined, b: ToolCall[] | undefined): boolean {
  const x = a ?? [], y = b ?? [];
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) {
    const c = x[i], d = y[i];
    if (c.id !== d.id || c.name !== d.name || !sameArguments(c.arguments, d.arguments)) {
      return false;
    }
  }
  return true;
}

/** The same images (by content hash) at the same places; none and `[]` are alike. */
function sameImages(a: ContentImage[] | undefined, b: ContentImage[] | undefined): boolean {
  const x = a ?? [], y = b ?? [];
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) {
    if (x[i].at !== y[i].at || x[i].image.hash !== y[i].image.hash) return false;
  }
  return true;
}

/** The `i`th own key of `o` in iteration order (JSON objects: insertion order). */
function keyAt(o: object, i: number): string | undefined {
  let j = 0;
  for (const k in o) if (j++ === i) return k;
  return undefined;
}

/**
 * The same keys in the same order; their values are pushed to be compared (all but `skip`'s).
 * Every message of every request's history passes here on the turn's path, so it allocates
 * nothing (no key arrays): objects hold a handful of keys, and looking one up by position costs
 * less than an array would.
 */
function orderedMembers(
  a: Record<string, unknown>,
  b: Record<string, unknown>,
  skip?: string,
): boolean {
  let n = 0;
  for (const k in a) {
    if (keyAt(b, n++) !== k) return false;
    if (k !== skip) pairs.push(a[k], b[k]);
  }
  return keyAt(b, n) === undefined;
}

/** Strict equality of JSON values, key order included: the same JSON text, without writing it. */
export function identicalJson(a: unknown, b: unknown): boolean {
  return a === b || walkEqual(a, b, orderedMembers);
}

/**
 * Of two messages already known to be `sameMessage`: also in the same form (what a client sent
 * verbatim), comparing only what `sameMessage` tolerates, so long contents are not compared twice.
 */
export function sameForm(a: Message, b: Message): boolean {
  if (a === b) return true;
  const ra = a as unknown as Record<string, unknown>, rb = b as unknown as Record<string, unknown>;
  return walkEqual(
    ra,
    rb,
    (x, y) => x === ra ? orderedMembers(x, y, "content") : orderedMembers(x, y),
  );
}

/**
 * @example
 * ```ts
 * sameMessage(
 *   { role: "assistant", content: "", tool_calls: [{ id: "c1", name: "bash", arguments: '{"command": "ls"}' }] },
 *   { role: "assistant", content: "", tool_calls: [{ id: "c1", name: "bash", arguments: '{"command":"ls"}' }] },
 * ); // true
 * ```
 */
export function sameMessage(a: Message, b: Message): boolean {
  if (a.role !== b.role || a.content !== b.content) return false;
  if (a.role === "tool") {
    const o = b as typeof a;
    return a.tool_call_id === o.tool_call_id && sameImages(a.images, o.images);
  }
  if (a.role === "assistant") {
    const o = b as typeof a;
    return (a.reasoning_content ?? "") === (o.reasoning_content ?? "") &&
      sameToolCalls(a.tool_calls, o.tool_calls);
  }
  return a.role !== "user" || sameImages(a.images, (b as typeof a).images);
}
