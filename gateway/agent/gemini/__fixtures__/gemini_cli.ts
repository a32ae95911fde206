/**
 * Test helpers over the recorded Gemini CLI 0.61.0 traffic in this folder (format:
 * `tests/recordings/README.md`): a session's records, each request as the call the route makes
 * of it, the recorded stream chunks, and the scripted reply turned back into the canonical answer
 * that would produce it.
 *
 * @module
 */
import type { TurnAnswer } from "../../../../canonical/mod.ts";
import { type GeminiCall, geminiCall } from "../gemini_call.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

export interface GeminiRecord {
  seq: number;
  url: string;
  headers: Record<string, string>;
  body: Json;
  reply: { plan: string; parts?: Json[] };
  response: { status: number; type: "sse" | "json"; events?: string[]; json?: Json };
}

/** The records of a session (`scenario`, `retry`, `json-to-stream`), parsed fresh each call. */
export function loadGeminiSession(session = "scenario"): GeminiRecord[] {
  const url = new URL(`./gemini-cli-0.61.0.${session}.jsonl`, import.meta.url);
  return Deno.readTextFileSync(url).split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
}

/** The call the route makes of a record (the model and method from its recorded URL). */
export function callOf(record: GeminiRecord): GeminiCall {
  return geminiCall(new URL(record.url, "http://127.0.0.1"), record.body);
}

/** The JSON of each recorded `data:` chunk. */
export function recordedChunks(record: GeminiRecord): Json[] {
  return (record.response.events ?? []).map((e) => {
    if (!e.startsWith("data: ")) throw new Error(`not a data line: ${e}`);
    return JSON.parse(e.slice("data: ".length));
  });
}

/**
 * The reply as a `TurnAnswer`, with the response id, model and usage the recording served (from
 * its final chunk, or its JSON body), so what this module writes can be compared with it.
 */
export function answerFromRecord(record: GeminiRecord): TurnAnswer {
  const parts: Json[] = record.reply.parts ?? [];
  const final = record.response.json ?? recordedChunks(record).at(-1);
  const usage = final.usageMetadata;
  const reasoning = parts.filter((p) => p.thought).map((p) => p.text).join("");
  const calls = parts.filter((p) => p.functionCall).map((p) => ({
    id: p.functionCall.id,
    name: p.functionCall.name,
    arguments: JSON.stringify(p.functionCall.args),
  }));
  return {
    id: final.responseId,
    model: final.modelVersion,
    message: {
      role: "assistant",
      content: parts.filter((p) => p.text !== undefined && !p.thought).map((p) => p.text).join(""),
      ...(reasoning ? { reasoning_content: reasoning } : {}),
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
    },
    stopReason: calls.length > 0 ? "tool_calls" : "stop",
    usage: {
      input_tokens: usage.promptTokenCount,
      output_tokens: usage.totalTokenCount - usage.promptTokenCount,
      reasoning_tokens: usage.thoughtsTokenCount ?? 0,
      cached_tokens: 0,
    },
    created: 1_700_000_000,
  };
}
