/**
 * The trainer API's error body, `{error: {type, message}}`, for a whole answer or for one item of
 * a batch (`POST /api/requests/complete` answers each completion on its own).
 *
 * @module
 */
import { httpStatus } from "../http_errors.ts";

const API_ERROR_TYPES: Readonly<Record<number, string>> = {
  401: "unauthorized",
  404: "not_found",
  409: "conflict",
  // The request was withdrawn (its agent is gone, its turn timed out): discard the generation.
  410: "gone",
  413: "request_too_large",
  429: "rate_limited",
};

export interface ApiError {
  type: string;
  message: string;
}

/** The error body's `error` for `status`. */
export function apiErrorOf(status: number, message: string): ApiError {
  return {
    type: API_ERROR_TYPES[status] ?? (status >= 500 ? "server_error" : "invalid_request"),
    message,
  };
}

/** The status and `error` of anything thrown serving the API (500 for the unexpected, logged). */
export function apiFailure(e: unknown): { status: number; error: ApiError } {
  const status = httpStatus(e);
  if (status !== undefined) return { status, error: apiErrorOf(status, (e as Error).message) };
  console.error("rollgate: trainer API error:", e);
  return { status: 500, error: apiErrorOf(500, (e as Error)?.message ?? String(e)) };
}
