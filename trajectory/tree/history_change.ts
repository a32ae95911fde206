/**
 * Where a client's history departs from a recorded one, for the evidence of a `rewrite` branch:
 * the first differing message and, inside it, the first differing field (tool arguments compared
 * as parsed JSON down to the differing value), with both sides decoded and cut around the first
 * differing character.
 *
 * @module
 */
import type { Message } from "../../canonical/mod.ts";
import { sameJson } from "./same_message.ts";

export interface HistoryChange {
  /** Index of the first differing message in the history. */
  message_index: number;
  /** Its role in the received history (or in the recorded one when the client dropped it). */
  role: string;
  /**
   * What differs: `added` / `removed` (one history is longer), `role`, or a path inside the
   * message such as `content` or `tool_calls[0].arguments.command`.
   */
  path: string;
  /** The recorded value there, decoded (JSON strings unescaped), around the first difference. */
  recorded: string | null;
  /** The received value there, decoded likewise. */
  received: string | null;
}

const CONTEXT = 40;

/** Both strings cut to a window around their first differing character. */
function around(a: string, b: string): [string, string] {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const from = Math.max(0, i - CONTEXT);
  const cut = (s: string) =>
    (from > 0 ? "…" : "") + s.slice(from, i + CONTEXT) + (s.length > i + CONTEXT ? "…" : "");
  return [cut(a), cut(b)];
}

function show(v: unknown): string {
  return typeof v === "string" ? v : v === undefined ? "(absent)" : JSON.stringify(v);
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The first path where two JSON values differ (key order and null members ignored). */
function jsonDifference(a: unknown, b: unknown, path: string): [string, unknown, unknown] {
  if (
    a && b && typeof a === "object" && typeof b === "object" &&
    Array.isArray(a) === Array.isArray(b)
  ) {
    const ra = a as Record<string, unknown>, rb = b as Record<string, unknown>;
    const keys = [...new Set([...Object.keys(ra), ...Object.keys(rb)])];
    for (const k of keys) {
      if (!sameJson(ra[k] ?? null, rb[k] ?? null)) {
        return jsonDifference(ra[k], rb[k], Array.isArray(a) ? `${path}[${k}]` : `${path}.${k}`);
      }
    }
  }
  return [path, a, b];
}

/** The first differing field of two messages known to differ. */
function fieldDifference(a: Message, b: Message): [string, unknown, unknown] {
  if (a.role !== b.role) return ["role", a.role, b.role];
  if (a.content !== b.content) return ["content", a.content, b.content];
  if (a.role === "tool" && b.role === "tool") {
    return ["tool_call_id", a.tool_call_id, b.tool_call_id];
  }
  if (a.role !== "assistant" || b.role !== "assistant") return ["content", a.content, b.content];
  if ((a.reasoning_content ?? "") !== (b.reasoning_content ?? "")) {
    return ["reasoning_content", a.reasoning_content ?? "", b.reasoning_content ?? ""];
  }
  const x = a.tool_calls ?? [], y = b.tool_calls ?? [];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const p = `tool_calls[${i}]`;
    if (!x[i] || !y[i]) return [p, x[i], y[i]];
    if (x[i].id !== y[i].id) return [`${p}.id`, x[i].id, y[i].id];
    if (x[i].name !== y[i].name) return [`${p}.name`, x[i].name, y[i].name];
    const d = jsonDifference(parsed(x[i].arguments), parsed(y[i].arguments), `${p}.arguments`);
    if (!sameJson(d[1] ?? null, d[2] ?? null)) return d;
  }
  return ["content", a.content, b.content];
}

/**
 * How the message at `index` of a received history differs from the recorded one there (either
 * may be missing: the client dropped or added a message).
 *
 * @example
 * ```ts
 * const change = messageChange(
 *   4,
 *   { role: "assistant", content: "", tool_calls: [{ id: "c", name: "Bash", arguments: '{"command":"printf \\\\u00e9"}' }] },
 *   { role: "assistant", content: "", tool_calls: [{ id: "c", name: "Bash", arguments: '{"command":"printf é"}' }] },
 * );
 * // { message_index: 4, role: "assistant", path: "tool_calls[0].arguments.command",
 * //   recorded: "printf \\u00e9", received: "printf é" }
 * ```
 */
export function messageChange(
  index: number,
  recorded: Message | undefined,
  received: Message | undefined,
): HistoryChange {
  if (!recorded || !received) {
    return {
      message_index: index,
      role: (received ?? recorded)?.role ?? "none",
      path: received ? "added" : "removed",
      recorded: recorded ? recorded.content : null,
      received: received ? received.content : null,
    };
  }
  const [path, a, b] = fieldDifference(recorded, received);
  const [ra, rb] = around(show(a), show(b));
  return { message_index: index, role: received.role, path, recorded: ra, received: rb };
}
