/**
 * Serving an agent request from a hosted API (black-box evaluation): forward the body unchanged,
 * relay the upstream's events as they arrive, have the turn runner record the message-level turn,
 * and hold the terminal event until the turn is recorded (Codex ends its turn on
 * `response.completed`).
 *
 * @module
 */
import type { Context } from "hono";
import type { Upstream, UpstreamCall } from "./upstream.ts";
import type { Rollout, RolloutActions } from "../../../trajectory/mod.ts";
import { clientSession } from "../client_session.ts";
import { GatewayError } from "../../gateway_error.ts";
import type { ProtocolAdapter, SseEvent } from "../../protocol.ts";
import { sseResponse } from "../../http/mod.ts";
import { upstreamAnswer } from "./upstream_answer.ts";

/** An upstream SDK error (`APIError` carries `status`) as a gateway error. */
export function upstreamError(e: unknown, upstream: Upstream): GatewayError {
  const status = (e as { status?: unknown })?.status;
  // The SDKs say only "Connection error." for a failed fetch: its cause says what happened.
  const cause = (e as { cause?: unknown })?.cause;
  const why = cause instanceof Error ? ` (${cause.message})` : "";
  const message = `upstream ${upstream.name}: ${(e as Error)?.message ?? String(e)}${why}`;
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
  rollouts: Pick<RolloutActions, "startBlackBox">,
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
  const req = { ...adapter.parseRequest(body), session: clientSession(c.req.raw.headers, body) };
  let call!: Promise<UpstreamCall>;
  const turn = rollouts.startBlackBox(rollout, req, () => {
    call = upstream.call(
      adapter.name,
      body as Record<string, unknown>,
      c.req.raw.headers,
      c.req.raw.signal,
    );
    return call.then(async (relay) => upstreamAnswer(adapter.name, await relay.final));
  });
  let relay: UpstreamCall;
  try {
    relay = await call;
  } catch (e) {
    throw upstreamError(e, upstream);
  }
  relay.final.catch(() => {});
  if (!relay.events) {
    await turn.result;
    return c.json(relay.body as object);
  }
  const events = relay.events;
  return sseResponse({
    keepAliveMs,
    produce: () => Promise.resolve(holdingLast(events, () => turn.result.then(() => {}))),
    onError: (e) => {
      const err = e instanceof GatewayError ? e : upstreamError(e, upstream);
      return adapter.streamErrorEvents(err.status, err.message);
    },
  });
}
