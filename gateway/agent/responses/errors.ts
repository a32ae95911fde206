/**
 * OpenAI-shaped error bodies for HTTP errors on `/v1/responses`. Clients built on the OpenAI API
 * read `error.message` (and sometimes `error.type`/`error.code`) to report or classify a failure,
 * so errors follow the same shape as OpenAI's own.
 *
 * @module
 */

export interface ErrorBody {
  error: { message: string; type: string; param: null; code: string | null };
}

/** OpenAI's error `type` for an HTTP status. */
export function errorType(status: number): string {
  switch (status) {
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 429:
      return "rate_limit_error";
  }
  return status >= 500 ? "server_error" : "invalid_request_error";
}

/** OpenAI's `code` where it has a well-known one, else null (as OpenAI sends for most 4xx). */
function errorCode(status: number): string | null {
  if (status === 401) return "invalid_api_key";
  if (status === 429) return "rate_limit_exceeded";
  return status >= 500 ? "server_error" : null;
}

/** The JSON body of an HTTP error response. */
export function errorBody(status: number, message: string): ErrorBody {
  return { error: { message, type: errorType(status), param: null, code: errorCode(status) } };
}
