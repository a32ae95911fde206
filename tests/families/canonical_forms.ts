/**
 * What a family's template makes of a generated assistant message (the message a client gets
 * back and echoes), for `registerFamilyChecks`' `canonical`.
 *
 * @module
 */
import type { AssistantMessage } from "../../canonical/mod.ts";
import { pythonStrip } from "../../model/mod.ts";
import { pythonJsonDumps } from "../../model/python_json.ts";
import { type JsonValue, parseOrderedJson } from "../../model/families/ordered_json.ts";

/** The Qwen3.5 template trims what it renders. */
export function trimmed(m: AssistantMessage): AssistantMessage {
  const out: AssistantMessage = { ...m, content: pythonStrip(m.content) };
  if (m.reasoning_content !== undefined) out.reasoning_content = pythonStrip(m.reasoning_content);
  return out;
}

/** The Qwen3 template renders no think block for an earlier turn with empty reasoning. */
export function withoutEmptyReasoning(m: AssistantMessage): AssistantMessage {
  if (m.reasoning_content !== "") return m;
  const { reasoning_content: _, ...rest } = m;
  return rest;
}

/**
 * Without reasoning: Kimi K2 (its template renders content verbatim and has none), DeepSeek V3.1
 * outside thinking mode (the prompt closed `</think>`, the policy writes none).
 */
export function withoutReasoning(m: AssistantMessage): AssistantMessage {
  const { reasoning_content: _, ...rest } = m;
  return rest;
}

/** The generation prompt opened reasoning (`<think>`): every answer has some, empty too. */
export function withReasoning(m: AssistantMessage): AssistantMessage {
  return { ...m, reasoning_content: m.reasoning_content ?? "" };
}

/** No reasoning, content without leading or trailing newlines (the hermes parser trims them). */
export function hermesWithoutReasoning(m: AssistantMessage): AssistantMessage {
  const { reasoning_content: _, ...rest } = m;
  return { ...rest, content: m.content.replace(/^\n+|\n+$/g, "") };
}

/** Llama 3: no reasoning, text trimmed, and an answer with a call is only the call. */
export function llama3Form(m: AssistantMessage): AssistantMessage {
  const { reasoning_content: _, ...rest } = m;
  return { ...rest, content: m.tool_calls?.length ? "" : pythonStrip(m.content) };
}

/**
 * Inkling: empty reasoning is not written, and history writes arguments compact and key-sorted
 * (what the policy then writes too).
 */
export function inklingForm(m: AssistantMessage): AssistantMessage {
  const out = withoutEmptyReasoning(m);
  if (!out.tool_calls) return out;
  return {
    ...out,
    tool_calls: out.tool_calls.map((c) => ({
      ...c,
      arguments: pythonJsonDumps(parseOrderedJson(c.arguments), {
        separators: [",", ":"],
        sortKeys: true,
      }),
    })),
  };
}

/** Keys sorted as Jinja's `dictsort` does (case-insensitively), at every level. */
function dictsorted(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map(dictsorted);
  if (!(v instanceof Map)) return v;
  const keys = [...v.keys()].sort((a, b) => {
    const x = a.toLowerCase(), y = b.toLowerCase();
    return x < y ? -1 : x > y ? 1 : 0;
  });
  return new Map(keys.map((k) => [k, dictsorted(v.get(k)!)]));
}

/**
 * Gemma 4, thinking off: no reasoning, text trimmed, an answer with calls has no text (history
 * writes it after the results), arguments with their keys sorted as the template writes them.
 */
export function gemma4Form(m: AssistantMessage): AssistantMessage {
  const { reasoning_content: _, ...rest } = m;
  if (!m.tool_calls?.length) return { ...rest, content: pythonStrip(m.content) };
  return {
    ...rest,
    content: "",
    tool_calls: m.tool_calls.map((c) => ({
      ...c,
      arguments: pythonJsonDumps(dictsorted(parseOrderedJson(c.arguments))),
    })),
  };
}
