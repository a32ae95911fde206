/**
 * What a Gemini request is, from its path and body: Gemini names the model and the method in the
 * path (`/v1beta/models/<model>:streamGenerateContent?alt=sse`), not in the body, so the
 * conversion reads both.
 *
 * @module
 */
import { InvalidRequestError } from "../../protocol.ts";

export type GeminiMethod = "generateContent" | "streamGenerateContent" | "countTokens";

/** One Gemini call. */
export interface GeminiCall {
  /** The model the path names (URL-decoded). */
  model: string;
  method: GeminiMethod;
  /** The request body as sent. */
  body: unknown;
}

const PATH = /\/models\/(.+):(generateContent|streamGenerateContent|countTokens)$/;

/**
 * The call a request makes. A stream is served as server-sent events only (`?alt=sse`, what
 * every Google SDK asks for); the JSON-array form of a bare `streamGenerateContent` is refused.
 */
export function geminiCall(url: URL, body: unknown): GeminiCall {
  const m = PATH.exec(url.pathname);
  if (!m) throw new InvalidRequestError(`${url.pathname} names no model and method`);
  const method = m[2] as GeminiMethod;
  if (method === "streamGenerateContent" && url.searchParams.get("alt") !== "sse") {
    throw new InvalidRequestError(
      "streamGenerateContent is served as server-sent events only: add ?alt=sse",
    );
  }
  let model: string;
  try {
    model = decodeURIComponent(m[1]);
  } catch {
    throw new InvalidRequestError(`the model in ${url.pathname} is not valid percent-encoding`);
  }
  return { model, method, body };
}
