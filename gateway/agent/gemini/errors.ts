/**
 * Error bodies in Google's shape, `{"error": {"code", "message", "status"}}`: the Google SDKs build
 * their `ApiError` from `code` and show `message`; `status` is the `google.rpc.Code` name the API
 * pairs with the HTTP status.
 *
 * @module
 */

export interface GeminiErrorBody {
  error: { code: number; message: string; status: string };
}

/** `google.rpc.Code` names by HTTP status, as Google's APIs map them. */
const STATUS: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  409: "ABORTED",
  429: "RESOURCE_EXHAUSTED",
  499: "CANCELLED",
  500: "INTERNAL",
  501: "UNIMPLEMENTED",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

/** The status name for an HTTP status: other 4xx are `INVALID_ARGUMENT`, other 5xx `INTERNAL`. */
export function errorStatus(status: number): string {
  return STATUS[status] ?? (status >= 500 ? "INTERNAL" : "INVALID_ARGUMENT");
}

/** The JSON body to send with an HTTP error status. */
export function errorBody(status: number, message: string): GeminiErrorBody {
  return { error: { code: status, message, status: errorStatus(status) } };
}
