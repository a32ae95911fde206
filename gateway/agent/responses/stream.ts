/**
 * Canonical answer → the Responses SSE event sequence, in the shape OpenAI streams it (and Codex
 * 0.169.0 accepted, see `__fixtures__/codex-0.169.0.jsonl`): `response.created`,
 * `response.in_progress`, per output item `output_item.added` → part/deltas → `output_item.done`,
 * then the terminal `response.completed` (`response.incomplete` on a length stop). Codex executes
 * tool calls from `output_item.done` but fails the turn unless the terminal event arrives.
 *
 * {@link streamEncoder} emits the events as the answer is generated; {@link toStreamEvents} feeds
 * a complete answer through the same encoder, so both paths send the same sequence.
 *
 * @module
 */
import {
  type AnswerHeader,
  answerHeader,
  type AnswerOptions,
  type TurnAnswer,
} from "../../../canonical/mod.ts";
import type { AnswerStreamEncoder, SseEvent } from "../../protocol.ts";
import { splitDeltas, unsentText } from "../text_deltas.ts";
import { wholeAnswerEvents } from "../whole_answer.ts";

import {
  inProgressResponse,
  messageItem,
  type OutputItem,
  reasoningItem,
  type ResponseObject,
  toolCallItem,
  toResponseObject,
} from "./response.ts";

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

/** A tool call item whole: `output_item.added`, its argument/input deltas, `output_item.done`. */
function emitToolCallItem(item: OutputItem, output_index: number, emit: Emit): void {
  const item_id = item.id;
  emit("response.output_item.added", { output_index, item: addedItem(item) });
  if (item.type === "function_call") {
    for (const delta of splitDeltas(item.arguments)) {
      emit("response.function_call_arguments.delta", { item_id, output_index, delta });
    }
    emit("response.function_call_arguments.done", {
      item_id,
      output_index,
      arguments: item.arguments,
    });
  } else if (item.type === "custom_tool_call") {
    for (const delta of splitDeltas(item.input)) {
      emit("response.custom_tool_call_input.delta", { item_id, output_index, delta });
    }
    emit("response.custom_tool_call_input.done", { item_id, output_index, input: item.input });
  }
  emit("response.output_item.done", { output_index, item });
}

/** The rest of `final` after the streamed prefix; `""` when `streamed` is not a prefix of it. */

/** One streamed text item (reasoning summary or message text) and how far it has come. */
interface TextItemState {
  phase: "none" | "open" | "closed";
  output_index: number;
  /** Concatenation of the deltas sent so far. */
  streamed: string;
}

/**
 * The Responses encoder for an answer streamed as it is generated. Sequence numbers count from 0
 * across every call. Reasoning becomes one `reasoning` item (one summary part, the same
 * `rs_`/`encrypted_content` as the complete response), text one `message` item; the first
 * `text()` delta closes the reasoning item. Tool calls are only known at `finish`, which sends
 * each call item whole, then the terminal `response.completed` (`response.incomplete` on a length
 * stop) carrying {@link toResponseObject} of the answer.
 *
 * Empty deltas send nothing. The protocol contract promises that the streamed reasoning and text
 * are prefixes of the final answer's; if they are not, nothing more is streamed for that part (no
 * further deltas, no throw), and its `.done` events carry the final answer's text so the items a
 * client records match the recorded turn. Likewise reasoning that arrives after text has started
 * (in a `reasoning()` call or as an unstreamed rest at `finish`) is not sent: the reasoning item,
 * if any, is already closed. In those contract violations the terminal response object, built
 * from the answer, may differ from what the deltas said. Calls after `finish` send nothing.
 */
export class ResponsesStreamEncoder implements AnswerStreamEncoder {
  #header: AnswerHeader;
  #request: AnswerOptions | undefined;
  #sequence = 0;
  #nextIndex = 0;
  #reasoning: TextItemState = { phase: "none", output_index: -1, streamed: "" };
  #message: TextItemState = { phase: "none", output_index: -1, streamed: "" };
  #finished = false;

  constructor(header: AnswerHeader, request?: AnswerOptions) {
    this.#header = header;
    this.#request = request;
  }

  /** `response.created` and `response.in_progress` with the empty, in-progress response. */
  start(): SseEvent[] {
    if (this.#finished) return [];
    const { id, created, model } = this.#header;
    const response = inProgressResponse(id, created, model);
    return this.#collect((emit) => {
      emit("response.created", { response });
      emit("response.in_progress", { response });
    });
  }

  /** Reasoning summary deltas, opening the reasoning item on first use. */
  reasoning(delta: string): SseEvent[] {
    if (this.#finished || delta === "" || this.#message.phase !== "none") return [];
    return this.#collect((emit) => this.#reasoningDeltas(delta, emit));
  }

  /** Output text deltas; closes the reasoning item and opens the message item on first use. */
  text(delta: string): SseEvent[] {
    if (this.#finished || delta === "") return [];
    return this.#collect((emit) => {
      this.#closeReasoning(this.#reasoning.streamed, emit);
      this.#textDeltas(delta, emit);
    });
  }

  /** The unstreamed rest of reasoning and text, the `.done` events, tool call items, terminal. */
  finish(answer: TurnAnswer): SseEvent[] {
    if (this.#finished) return [];
    this.#finished = true;
    const final = toResponseObject(answer, this.#request);
    const reasoning = answer.message.reasoning_content ?? "";
    const text = answer.message.content ?? "";
    return this.#collect((emit) => {
      if (this.#message.phase === "none") {
        this.#reasoningDeltas(unsentText(reasoning, this.#reasoning.streamed), emit);
        this.#closeReasoning(reasoning, emit);
      }
      this.#textDeltas(unsentText(text, this.#message.streamed), emit);
      this.#closeMessage(text, emit);
      for (const call of answer.message.tool_calls ?? []) {
        emitToolCallItem(toolCallItem(call), this.#nextIndex++, emit);
      }
      const terminal = final.status === "incomplete" ? "response.incomplete" : "response.completed";
      emit(terminal, { response: final });
    });
  }

  /** Runs `body` with an emitter that numbers the events, and returns them. */
  #collect(body: (emit: Emit) => void): SseEvent[] {
    const events: SseEvent[] = [];
    body((type, fields) => {
      const data = { type, sequence_number: this.#sequence++, ...fields };
      events.push({ event: type, data: JSON.stringify(data) });
    });
    return events;
  }

  #reasoningDeltas(delta: string, emit: Emit): void {
    if (delta === "") return;
    const state = this.#reasoning;
    const item_id = `rs_${this.#header.id}`;
    if (state.phase === "none") {
      state.phase = "open";
      state.output_index = this.#nextIndex++;
      const item = addedItem(reasoningItem(this.#header.id, ""));
      emit("response.output_item.added", { output_index: state.output_index, item });
      emit("response.reasoning_summary_part.added", {
        item_id,
        output_index: state.output_index,
        summary_index: 0,
        part: { type: "summary_text", text: "" },
      });
    }
    const at = { item_id, output_index: state.output_index, summary_index: 0 };
    for (const piece of splitDeltas(delta)) {
      emit("response.reasoning_summary_text.delta", { ...at, delta: piece });
    }
    state.streamed += delta;
  }

  /** Closes an open reasoning item with `text` as its summary; no-op unless it is open. */
  #closeReasoning(text: string, emit: Emit): void {
    const state = this.#reasoning;
    if (state.phase !== "open") return;
    state.phase = "closed";
    const item = reasoningItem(this.#header.id, text);
    const at = { item_id: item.id, output_index: state.output_index, summary_index: 0 };
    emit("response.reasoning_summary_text.done", { ...at, text });
    emit("response.reasoning_summary_part.done", { ...at, part: item.summary[0] });
    emit("response.output_item.done", { output_index: state.output_index, item });
  }

  #textDeltas(delta: string, emit: Emit): void {
    if (delta === "") return;
    const state = this.#message;
    const item_id = `msg_${this.#header.id}`;
    if (state.phase === "none") {
      state.phase = "open";
      state.output_index = this.#nextIndex++;
      const item = addedItem(messageItem(this.#header.id, ""));
      emit("response.output_item.added", { output_index: state.output_index, item });
      emit("response.content_part.added", {
        item_id,
        output_index: state.output_index,
        content_index: 0,
        part: { type: "output_text", text: "", annotations: [] },
      });
    }
    const at = { item_id, output_index: state.output_index, content_index: 0 };
    for (const piece of splitDeltas(delta)) {
      emit("response.output_text.delta", { ...at, delta: piece });
    }
    state.streamed += delta;
  }

  /** Closes an open message item with `text` as its content; no-op unless it is open. */
  #closeMessage(text: string, emit: Emit): void {
    const state = this.#message;
    if (state.phase !== "open") return;
    state.phase = "closed";
    const item = messageItem(this.#header.id, text);
    const at = { item_id: item.id, output_index: state.output_index, content_index: 0 };
    emit("response.output_text.done", { ...at, text });
    emit("response.content_part.done", { ...at, part: item.content[0] });
    emit("response.output_item.done", { output_index: state.output_index, item });
  }
}

/** An encoder for a Responses answer streamed as generated; see {@link ResponsesStreamEncoder}. */
export function streamEncoder(
  header: AnswerHeader,
  request?: AnswerOptions,
): ResponsesStreamEncoder {
  return new ResponsesStreamEncoder(header, request);
}

/**
 * Every SSE event of a complete answer, in order, `sequence_number` counting from 0, terminal
 * event last: the answer fed whole through {@link streamEncoder}.
 */
export function toStreamEvents(answer: TurnAnswer, request?: AnswerOptions): SseEvent[] {
  return wholeAnswerEvents(streamEncoder(answerHeader(answer), request), answer);
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
