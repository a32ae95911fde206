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
  const bytes = await readBodyBytes(request, maxBytes);
  const text = bytes ? new TextDecoder().decode(bytes) : "";
  if (text.trim() === "" && "empty" in options) return options.empty;
  return parseJsonBody(text);
}

/**
 * A request's body as bytes, under the same cap (a 413 from the declared length before anything
 * is read, or once the bytes pass it); null when it has none. A body that breaks on its way is a
 * 400.
 */
export async function readBodyBytes(
  request: Request,
  maxBytes: number,
): Promise<Uint8Array<ArrayBuffer> | null> {
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) throw tooLarge(maxBytes);
  if (!request.body) return null;
  // The gateway's own server reads it into one buffer, without the stream; elsewhere a declared
  // length is what the server reads, no more: one native read.
  const whole = directBody(request);
  const read = whole
    ? whole(maxBytes)
    : Number.isFinite(declared)
    ? request.bytes()
    : readCapped(request.body, maxBytes);
  return await (read as Promise<Uint8Array<ArrayBuffer>>).catch(cutOff);
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

/** A body read until it ends or passes `maxBytes`. */
async function readCapped(
  body: ReadableStream<Uint8Array<ArrayBuffer>>,
  maxBytes: number,
): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Uint8Array<ArrayBuffer>[] = [];
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
  if (chunks.length === 1) return chunks[0];
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return bytes;
}

/** A body that broke on its way (the client reset the connection): a 400, not an internal error. */
function cutOff(e: unknown): never {
  if (e instanceof GatewayError) throw e;
  throw new GatewayError(400, `the request body could not be read: ${(e as Error).message}`);
}

export function tooLarge(maxBytes: number): GatewayError {
  return new GatewayError(413, `request body exceeds the gateway's limit of ${maxBytes} bytes`);
}
