/**
 * Reading a JSON request body under a size cap. Agents send whole histories (Claude Code's first
 * request alone is 88 KB, tool results can be megabytes), so the cap is generous by default
 * (64 MiB) and configurable; past it the client gets a 413, never a crashed process.
 *
 * @module
 */
import { GatewayError } from "../gateway_error.ts";
import { directBody } from "./body_stream.ts";

export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;

/**
 * How deep a request's JSON may nest. Real tool schemas nest a dozen levels; past this a 400
 * says so, before anything that walks the value (templates, comparisons, the journal's
 * `JSON.stringify`) could run out of stack.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * The request's body parsed as JSON, read under `maxBytes` (413 past it). An empty body is a 400,
 * unless `empty` says what it stands for (the trainer API's bodies whose fields are all optional:
 * `curl -X POST …/ack` sends none at all).
 */
export async function readJsonBody(
  request: Request,
  maxBytes: number,
  options: { empty?: unknown } = {},
): Promise<unknown> {
  if (Number(request.headers.get("content-length") ?? NaN) > maxBytes) throw tooLarge(maxBytes);
  const text = request.body ? new TextDecoder().decode(await readBodyBytes(request, maxBytes)) : "";
  if (text.trim() === "" && "empty" in options) return options.empty;
  return parseJsonBody(text);
}

/** A request's body as bytes, under the size cap (a 413 past it). */
export async function readBodyBytes(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) throw tooLarge(maxBytes);
  if (!request.body) throw new GatewayError(400, "request body is empty; expected JSON");
  // The gateway's own server reads it into one buffer, without the stream.
  const whole = directBody(request);
  if (whole) return await whole(maxBytes);
  // A declared length is what the server reads, no more: one native read.
  return Number.isFinite(declared)
    ? await request.bytes()
    : await readCapped(request.body, maxBytes);
}

/**
 * A JSON request body's text parsed (a 400 for an empty or malformed one, or one nested deeper
 * than {@link MAX_JSON_DEPTH}).
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === "") throw new GatewayError(400, "request body is empty; expected JSON");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new GatewayError(400, `malformed JSON body: ${(e as Error).message}`);
  }
  if (nestsDeeperThan(value, MAX_JSON_DEPTH)) {
    throw new GatewayError(
      400,
      `the JSON body nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects; the gateway accepts at most ${MAX_JSON_DEPTH}`,
    );
  }
  return value;
}

/** Whether `value` has arrays or objects more than `limit` levels deep (walked without recursion). */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: unknown[] = [value];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const v = stack.pop();
    const depth = depths.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === "object" && child !== null) {
        stack.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/** A body of unknown length (chunked), read until it ends or passes `maxBytes`. */
async function readCapped(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return bytes;
}

function tooLarge(maxBytes: number): GatewayError {
  return new GatewayError(413, `request body exceeds the gateway's limit of ${maxBytes} bytes`);
}
