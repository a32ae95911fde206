/**
 * The contract every wire protocol module implements. Conversions are pure: no I/O here, the
 * route in `gateway/agent_routes.ts` does the HTTP.
 *
 * @module
 */
import type { CanonicalRequest, Protocol, TurnAnswer } from "../model/messages.ts";

/** One server-sent event; `event` is omitted for protocols that send only `data:` lines. */
export interface SseEvent {
  event?: string;
  data: string;
}

/** A request body that does not fit the protocol's schema; becomes a 400 in the protocol's shape. */
export class InvalidRequestError extends Error {
  override name = "InvalidRequestError";
}

export interface ProtocolAdapter {
  readonly name: Protocol;
  /** Prefix of the tool-call ids the gateway mints for this protocol (`toolu_`, `call_`). */
  readonly toolCallIdPrefix: string;
  /** Validates (zod) and converts a request body; throws `InvalidRequestError`. */
  parseRequest(body: unknown): CanonicalRequest;
  /** The non-streaming JSON response. */
  toResponseBody(answer: TurnAnswer, request: CanonicalRequest): unknown;
  /** The complete SSE event sequence for the answer, in order, terminal event last. */
  toStreamEvents(answer: TurnAnswer, request: CanonicalRequest): SseEvent[];
  /** A protocol-shaped error body for an HTTP error status. */
  errorBody(status: number, message: string): unknown;
  /** Events that report an error inside an already-started stream. */
  streamErrorEvents(status: number, message: string): SseEvent[];
}
