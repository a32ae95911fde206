/**
 * Serving an agent request from a hosted API (black-box evaluation): forward the body unchanged,
 * relay the upstream's events as they arrive, record the message-level turn, and hold the
 * terminal event until the turn is recorded (Codex ends its turn on `response.completed`).
 *
 * @module
 */
import type { Context } from "hono";
import type { Upstream } from "../model/backends/upstream.ts";
import { recordBlackBoxTurn } from "../trajectory/black_box.ts";
import { clientSession } from "./client_session.ts";
import type { Rollout } from "../trajectory/rollout.ts";
import { GatewayError } from "./gateway_error.ts";
import type { ProtocolAdapter, SseEvent } from "./protocol.ts";
import { sseResponse } from "./sse_response.ts";
import { upstreamAnswer } from "./upstream_answer.ts";

/** An upstream SDK error (`APIError` carries `status`) as a gateway error. */
export function upstreamError(e: unknown, upstream: Upstream): GatewayError {
  const status = (e as { status?: unknown })?.status;
  const message = `upstream ${upstream.name}: ${(e as Error)?.message ?? String(e)}`;
  return new GatewayError(typeof status === "number" && status >= 400 ? status : 502, message);
}

async function* holdingLast(
  events: AsyncIterable<SseEvent>,
  beforeLast: () => Promise<void>,
): AsyncIterable<SseEvent> {
  let held: SseEvent | undefined;
  for await (const e of events) {
    if (held) yield held;
    held = e;
  }
  await beforeLast();
  if (held) yield held;
}

export async function serveBlackBox(
  c: Context,
  adapter: ProtocolAdapter,
  rollout: Rollout,
  upstream: Upstream,
  body: unknown,
  keepAliveMs: number,
): Promise<Response> {
  if (!upstream.protocols.includes(adapter.name)) {
    throw new GatewayError(
      400,
      `rollout ${rollout.id} uses the black-box backend ${upstream.name}, which serves ${
        upstream.protocols.join(", ")
      }, not ${adapter.name}`,
    );
  }
  if (rollout.status !== "active") throw new GatewayError(409, `rollout ${rollout.id} is finished`);
  const req = { ...adapter.parseRequest(body), session: clientSession(c.req.raw.headers, body) };
  const received = Date.now();
  const record = (final: unknown) => {
    const { message, usage } = upstreamAnswer(adapter.name, final);
    recordBlackBoxTurn(rollout, req, message, usage, received);
  };
  let call;
  try {
    call = await upstream.call(
      adapter.name,
      body as Record<string, unknown>,
      c.req.raw.headers,
      c.req.raw.signal,
    );
  } catch (e) {
    throw upstreamError(e, upstream);
  }
  call.final.catch(() => {});
  if (!call.events) {
    record(await call.final);
    return c.json(call.body as object);
  }
  const events = call.events;
  return sseResponse({
    keepAliveMs,
    produce: () => Promise.resolve(holdingLast(events, async () => record(await call.final))),
    onError: (e) => {
      const err = e instanceof GatewayError ? e : upstreamError(e, upstream);
      return adapter.streamErrorEvents(err.status, err.message);
    },
  });
}
