/**
 * Canonical answer → Responses `response` object. Item ids are derived from the turn id and the
 * tool-call ids, so the streamed items, the final object and a later echo of them all agree, and
 * the gateway can recognise its own items when Codex sends them back. `encrypted_content` carries a
 * `rollgate:<turn id>` handle instead of real encrypted reasoning (clients echo it verbatim).
 *
 * @module
 */
import type { AnswerOptions, ToolCall, TurnAnswer, Usage } from "../../../canonical/mod.ts";

export interface ReasoningOutputItem {
  type: "reasoning";
  id: string;
  summary: { type: "summary_text"; text: string }[];
  encrypted_content: string;
}

export interface OutputText {
  type: "output_text";
  text: string;
  annotations: unknown[];
}

export interface MessageOutputItem {
  type: "message";
  id: string;
  status: "completed" | "in_progress";
  role: "assistant";
  content: OutputText[];
}

export interface FunctionCallOutputItem {
  type: "function_call";
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: "completed" | "in_progress";
}

export interface CustomToolCallOutputItem {
  type: "custom_tool_call";
  id: string;
  call_id: string;
  name: string;
  input: string;
  status: "completed" | "in_progress";
}

export type OutputItem =
  | ReasoningOutputItem
  | MessageOutputItem
  | FunctionCallOutputItem
  | CustomToolCallOutputItem;

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export type ResponseStatus = "in_progress" | "completed" | "incomplete" | "failed";

export interface ResponseObject {
  id: string;
  object: "response";
  created_at: number;
  status: ResponseStatus;
  model: string;
  output: OutputItem[];
  usage: ResponsesUsage | null;
  incomplete_details: { reason: "max_output_tokens" } | null;
  error: { code: string; message: string } | null;
  parallel_tool_calls: boolean;
  tool_choice: "auto";
  tools: unknown[];
}

/** The raw string a custom tool receives: canonical arguments are `{"input": "<string>"}`. */
function customInput(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    const input = (parsed as { input?: unknown } | null)?.input;
    if (typeof input === "string") return input;
  } catch {
    // Not our JSON wrapper: hand the text over as it is.
  }
  return args;
}

/** A tool call as an output item; `fc_`/`ctc_` ids reuse the call id's suffix. */
export function toolCallItem(call: ToolCall): FunctionCallOutputItem | CustomToolCallOutputItem {
  const suffix = call.id.startsWith("call_") ? call.id.slice("call_".length) : call.id;
  if (call.kind === "custom") {
    return {
      type: "custom_tool_call",
      id: `ctc_${suffix}`,
      call_id: call.id,
      name: call.name,
      input: customInput(call.arguments),
      status: "completed",
    };
  }
  return {
    type: "function_call",
    id: `fc_${suffix}`,
    call_id: call.id,
    name: call.name,
    arguments: call.arguments,
    status: "completed",
  };
}

/** The reasoning item of turn `id`: its text as one summary part, a `rollgate:` handle. */
export function reasoningItem(id: string, text: string): ReasoningOutputItem {
  return {
    type: "reasoning",
    id: `rs_${id}`,
    summary: [{ type: "summary_text", text }],
    encrypted_content: `rollgate:${id}`,
  };
}

/** The assistant message item of turn `id` with its text as one `output_text` part. */
export function messageItem(id: string, text: string): MessageOutputItem {
  return {
    type: "message",
    id: `msg_${id}`,
    status: "completed",
    role: "assistant",
    content: [{ type: "output_text", text, annotations: [] }],
  };
}

/** The answer's output items in order: reasoning, message text, then one item per tool call. */
export function toOutputItems(answer: TurnAnswer): OutputItem[] {
  const { message } = answer;
  const items: OutputItem[] = [];
  if (message.reasoning_content) items.push(reasoningItem(answer.id, message.reasoning_content));
  if (message.content) items.push(messageItem(answer.id, message.content));
  for (const call of message.tool_calls ?? []) items.push(toolCallItem(call));
  return items;
}

export function toResponsesUsage(usage: Usage): ResponsesUsage {
  return {
    input_tokens: usage.input_tokens,
    input_tokens_details: { cached_tokens: usage.cached_tokens },
    output_tokens: usage.output_tokens,
    output_tokens_details: { reasoning_tokens: usage.reasoning_tokens },
    total_tokens: usage.input_tokens + usage.output_tokens,
  };
}

/**
 * The response as `response.created` / `response.in_progress` announce it: no output, no usage.
 * `id` is the turn id, `created` Unix seconds.
 */
export function inProgressResponse(id: string, created: number, model: string): ResponseObject {
  return {
    id: `resp_${id}`,
    object: "response",
    created_at: created,
    status: "in_progress",
    model,
    output: [],
    usage: null,
    incomplete_details: null,
    error: null,
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
  };
}

/**
 * The complete (non-streaming) response object; also the payload of the stream's terminal event.
 * A `length` stop becomes status `incomplete` with reason `max_output_tokens`, as OpenAI reports it.
 */
export function toResponseObject(answer: TurnAnswer, _request?: AnswerOptions): ResponseObject {
  const truncated = answer.stopReason === "length";
  return {
    ...inProgressResponse(answer.id, answer.created, answer.model),
    status: truncated ? "incomplete" : "completed",
    output: toOutputItems(answer),
    usage: toResponsesUsage(answer.usage),
    incomplete_details: truncated ? { reason: "max_output_tokens" } : null,
  };
}
