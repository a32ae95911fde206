/**
 * Semantic equality of canonical messages: the rule that decides whether a client's re-sent
 * history is the history the gateway recorded.
 *
 * Wire details are gone after conversion (`cache_control`, block vs string, item ids), so what
 * is left to tolerate is tool arguments: pi re-serializes them and Codex may reorder keys, so
 * they compare as parsed JSON, with keys in any order and `null` members treated as absent.
 * Ids (`tool_call_id`, tool-call ids) compare verbatim.
 *
 * @module
 */
import type { Message, ToolCall } from "../canonical/mod.ts";

/** Deep equality of JSON values; object key order and `null` members do not matter. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => sameJson(x, b[i]));
  }
  const ra = a as Record<string, unknown>, rb = b as Record<string, unknown>;
  const ka = Object.keys(ra).filter((k) => ra[k] !== null);
  const kb = Object.keys(rb).filter((k) => rb[k] !== null);
  return ka.length === kb.length && ka.every((k) => k in rb && sameJson(ra[k], rb[k]));
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

/** The `i`th own key of `o` in iteration order (JSON objects: insertion order). */
function keyAt(o: object, i: number): string | undefined {
  let j = 0;
  for (const k in o) if (j++ === i) return k;
  return undefined;
}

/**
 * The same keys in the same order, and `same` for every value but `skip`'s. Every message of
 * every request's history passes here on the turn's path, so it allocates nothing (no key
 * arrays): objects hold a handful of keys, and looking one up by position costs less than an
 * array would.
 */
function sameKeys(
  a: Record<string, unknown>,
  b: Record<string, unknown>,
  same: (x: unknown, y: unknown) => boolean,
  skip?: string,
): boolean {
  let n = 0;
  for (const k in a) {
    if (keyAt(b, n++) !== k) return false;
    if (k !== skip && !same(a[k], b[k])) return false;
  }
  return keyAt(b, n) === undefined;
}

/** Strict equality of JSON values, key order included: the same JSON text, without writing it. */
export function identicalJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  const array = Array.isArray(a);
  if (array !== Array.isArray(b)) return false;
  if (array) {
    const x = a as unknown[], y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!identicalJson(x[i], y[i])) return false;
    return true;
  }
  return sameKeys(a as Record<string, unknown>, b as Record<string, unknown>, identicalJson);
}

/**
 * Of two messages already known to be `sameMessage`: also in the same form (what a client sent
 * verbatim), comparing only what `sameMessage` tolerates, so long contents are not compared twice.
 */
export function sameForm(a: Message, b: Message): boolean {
  if (a === b) return true;
  const ra = a as unknown as Record<string, unknown>, rb = b as unknown as Record<string, unknown>;
  return sameKeys(ra, rb, identicalJson, "content");
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
  if (a.role === "tool") return a.tool_call_id === (b as typeof a).tool_call_id;
  if (a.role === "assistant") {
    const o = b as typeof a;
    return (a.reasoning_content ?? "") === (o.reasoning_content ?? "") &&
      sameToolCalls(a.tool_calls, o.tool_calls);
  }
  return true;
}
