/**
 * Anthropic-shaped error bodies. Clients (the official SDKs, Claude Code) read `error.type` to
 * decide what to show and whether to retry, so the type must match the HTTP status the way the
 * real API pairs them.
 *
 * @module
 */

/** The `error.type` values of the Anthropic API. */
export type AnthropicErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "request_too_large"
  | "rate_limit_error"
  | "api_error"
  | "overloaded_error";

export interface AnthropicErrorBody {
  type: "error";
  error: { type: AnthropicErrorType; message: string };
}

/** The `error.type` the Anthropic API uses for an HTTP status. */
export function errorType(status: number): AnthropicErrorType {
  switch (status) {
    case 400:
    case 409:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
    case 529:
      return "overloaded_error";
  }
  return status >= 500 ? "api_error" : "invalid_request_error";
}

/** `{type: "error", error: {type, message}}` for an HTTP error status. */
export function errorBody(status: number, message: string): AnthropicErrorBody {
  return { type: "error", error: { type: errorType(status), message } };
}
