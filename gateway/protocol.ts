/**
 * The contract every wire protocol module implements. Conversions are pure: no I/O here, the
 * route in `gateway/agent/agent_routes.ts` does the HTTP.
 *
 * @module
 */
import type {
  AnswerHeader,
  AnswerOptions,
  CanonicalRequest,
  Protocol,
  TurnAnswer,
} from "../canonical/mod.ts";

/** One server-sent event; `event` is omitted for protocols that send only `data:` lines. */
export interface SseEvent {
  event?: string;
  data: string;
  /** `data` goes out as it is, unframed (Gemini reports an in-stream error as a bare JSON chunk). */
  bare?: boolean;
}

/** A request body that does not fit the protocol's schema; becomes a 400 in the protocol's shape. */
export class InvalidRequestError extends Error {
  override name = "InvalidRequestError";
}

/**
 * Emits a protocol's SSE events for an answer that arrives piece by piece (real streaming from
 * an engine or a trainer that appends tokens as they are sampled).
 *
 * Call order: `start()`, any number of `reasoning()` then `text()` deltas (reasoning never comes
 * after text), then `finish(answer)` once the turn is recorded. The streamed reasoning and text
 * are prefixes of `answer.message.reasoning_content` / `answer.message.content`; `finish` sends
 * the rest of both, the tool calls, the stop reason, usage and the terminal event.
 */
export interface AnswerStreamEncoder {
  start(): SseEvent[];
  reasoning(delta: string): SseEvent[];
  text(delta: string): SseEvent[];
  finish(answer: TurnAnswer): SseEvent[];
}

/** A request as `parseRequest` gives it, with where each history element's messages end. */
export interface HistoryRead {
  request: CanonicalRequest;
  /** Canonical messages before the first element's (a system prompt from a field of its own). */
  lead: number;
  /**
   * Per element of the history array: how many canonical messages it and the elements before it
   * make (the lead not counted), or -1 after an element whose messages depend on what follows
   * (no known prefix may end there).
   */
  ends: number[];
}

/**
 * Where a protocol's request keeps its history, for reading a request whose leading history the
 * gateway already has (`gateway/agent/known_prefix.ts`): an array of wire elements whose
 * conversion, at the element ends `read` marks, does not depend on the elements before.
 */
export interface HistoryLayout {
  /** The top-level key of the history array (`messages`, `input`, `contents`). */
  readonly field: string;
  /** `parseRequest` (of what `requestOf` made, where it is defined), with the element ends. */
  read(request: unknown): HistoryRead;
}

export interface ProtocolAdapter {
  readonly name: Protocol;
  /** Prefix of the tool-call ids the gateway mints for this protocol (`toolu_`, `call_`). */
  readonly toolCallIdPrefix: string;
  /**
   * What {@link parseRequest} reads, from the request's URL and body, for a protocol that says
   * part of a request in its path (Gemini: the model and whether to stream); absent, the body.
   * Throws `InvalidRequestError`.
   */
  requestOf?(url: URL, body: unknown): unknown;
  /** Validates (zod) and converts a request body; throws `InvalidRequestError`. */
  parseRequest(body: unknown): CanonicalRequest;
  /** Where the history is, for a protocol whose requests may be read from a known prefix on. */
  readonly history?: HistoryLayout;
  /** The non-streaming JSON response. */
  toResponseBody(answer: TurnAnswer, request: AnswerOptions): unknown;
  /** The complete SSE event sequence for the answer, in order, terminal event last. */
  toStreamEvents(answer: TurnAnswer, request: AnswerOptions): SseEvent[];
  /** An encoder for an answer streamed as it is generated. */
  streamEncoder(header: AnswerHeader, request: AnswerOptions): AnswerStreamEncoder;
  /** A protocol-shaped error body for an HTTP error status. */
  errorBody(status: number, message: string): unknown;
  /** Events that report an error inside an already-started stream. */
  streamErrorEvents(status: number, message: string): SseEvent[];
  /**
   * For a protocol whose clients cannot skip SSE comments (Gemini's SDKs): the event that keeps
   * a silent stream open, sent instead of the `: keep-alive` comments (and no opening comment).
   */
  readonly keepAlive?: SseEvent;
}
