/**
 * Canonical answer → the Responses SSE event sequence. The answer is complete before we stream, so
 * the whole sequence is built at once and replayed in the shape OpenAI streams it (and Codex
 * 0.169.0 accepted, see `__fixtures__/codex-0.169.0.jsonl`): `response.created`,
 * `response.in_progress`, per output item `output_item.added` → part/deltas → `output_item.done`,
 * then the terminal `response.completed` (`response.incomplete` on a length stop). Codex executes
 * tool calls from `output_item.done` but fails the turn unless the terminal event arrives.
 *
 * @module
 */
import type { CanonicalRequest, TurnAnswer } from "../../model/messages.ts";
import type { SseEvent } from "../protocol.ts";
import { type OutputItem, type ResponseObject, toResponseObject } from "./response.ts";

/** Largest delta piece, in code points: real servers stream text in small pieces. */
export const DELTA_CHUNK_SIZE = 64;

/** Splits text into pieces of at most `size` code points (never inside a surrogate pair). */
export function chunkText(text: string, size = DELTA_CHUNK_SIZE): string[] {
  const chars = Array.from(text);
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(""));
  return pieces;
}

type Emit = (type: string, fields: Record<string, unknown>) => void;

/** The item as announced by `output_item.added`: same id, empty body, still in progress. */
function addedItem(item: OutputItem): OutputItem {
  switch (item.type) {
    case "reasoning":
      return { ...item, summary: [] };
    case "message":
      return { ...item, status: "in_progress", content: [] };
    case "function_call":
      return { ...item, arguments: "", status: "in_progress" };
    case "custom_tool_call":
      return { ...item, input: "", status: "in_progress" };
  }
}

/** The events between `output_item.added` and `output_item.done` that carry the item's text. */
function emitItemBody(item: OutputItem, output_index: number, emit: Emit): void {
  const item_id = item.id;
  switch (item.type) {
    case "reasoning":
      item.summary.forEach((part, summary_index) => {
        const at = { item_id, output_index, summary_index };
        emit("response.reasoning_summary_part.added", { ...at, part: { ...part, text: "" } });
        for (const delta of chunkText(part.text)) {
          emit("response.reasoning_summary_text.delta", { ...at, delta });
        }
        emit("response.reasoning_summary_text.done", { ...at, text: part.text });
        emit("response.reasoning_summary_part.done", { ...at, part });
      });
      return;
    case "message":
      item.content.forEach((part, content_index) => {
        const at = { item_id, output_index, content_index };
        emit("response.content_part.added", { ...at, part: { ...part, text: "" } });
        for (const delta of chunkText(part.text)) {
          emit("response.output_text.delta", { ...at, delta });
        }
        emit("response.output_text.done", { ...at, text: part.text });
        emit("response.content_part.done", { ...at, part });
      });
      return;
    case "function_call":
      for (const delta of chunkText(item.arguments)) {
        emit("response.function_call_arguments.delta", { item_id, output_index, delta });
      }
      emit("response.function_call_arguments.done", {
        item_id,
        output_index,
        arguments: item.arguments,
      });
      return;
    case "custom_tool_call":
      for (const delta of chunkText(item.input)) {
        emit("response.custom_tool_call_input.delta", { item_id, output_index, delta });
      }
      emit("response.custom_tool_call_input.done", { item_id, output_index, input: item.input });
      return;
  }
}

/** Every SSE event of the answer, in order, `sequence_number` counting from 0, terminal event last. */
export function toStreamEvents(answer: TurnAnswer, request?: CanonicalRequest): SseEvent[] {
  const final = toResponseObject(answer, request);
  const events: SseEvent[] = [];
  const emit: Emit = (type, fields) => {
    const data = { type, sequence_number: events.length, ...fields };
    events.push({ event: type, data: JSON.stringify(data) });
  };

  const pending: ResponseObject = {
    ...final,
    status: "in_progress",
    output: [],
    usage: null,
    incomplete_details: null,
  };
  emit("response.created", { response: pending });
  emit("response.in_progress", { response: pending });
  final.output.forEach((item, output_index) => {
    emit("response.output_item.added", { output_index, item: addedItem(item) });
    emitItemBody(item, output_index, emit);
    emit("response.output_item.done", { output_index, item });
  });
  const terminal = final.status === "incomplete" ? "response.incomplete" : "response.completed";
  emit(terminal, { response: final });
  return events;
}

/**
 * The events that end an already-started stream with an error: one `response.failed` whose
 * response carries the error (Codex reports `error.message` and fails the turn).
 */
export function streamErrorEvents(status: number, message: string): SseEvent[] {
  const response: ResponseObject = {
    id: "resp_failed",
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status: "failed",
    model: "",
    output: [],
    usage: null,
    incomplete_details: null,
    error: { code: status >= 400 && status < 500 ? "invalid_request" : "server_error", message },
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
  };
  const data = { type: "response.failed", sequence_number: 0, response };
  return [{ event: "response.failed", data: JSON.stringify(data) }];
}
