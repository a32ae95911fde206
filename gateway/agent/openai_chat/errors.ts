/**
 * Error bodies in OpenAI's shape. The OpenAI SDKs (pi uses the JS one) read `error.message` and
 * `error.type` to build the exception the agent shows, so errors must use this shape to be
 * readable on the agent's side.
 *
 * @module
 */

/** OpenAI's error envelope: `{error: {message, type, param, code}}`. */
export interface ChatErrorBody {
  error: {
    message: string;
    type: string;
    param: null;
    code: string | null;
  };
}

/** Machine-readable codes for the statuses that have an obvious one; the rest send `null`. */
const CODES: Record<number, string> = {
  401: "invalid_api_key",
  404: "not_found",
  409: "conflict",
  413: "request_too_large",
  429: "rate_limit_exceeded",
};

/** OpenAI's error `type` for an HTTP status. */
export function errorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 400 && status < 500) return "invalid_request_error";
  return "server_error";
}

/** The JSON body to send with an HTTP error status. */
export function errorBody(status: number, message: string): ChatErrorBody {
  return { error: { message, type: errorType(status), param: null, code: CODES[status] ?? null } };
}
