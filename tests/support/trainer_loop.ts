/**
 * The trainer side of a test double: long-poll `GET /api/requests/next` until stopped and hand
 * each pending request to `handle`.
 *
 * @module
 */
export interface PolledRequest {
  request_id: string;
  rollout_id: string;
  turn_id: string;
  prompt_ids: number[];
  sampling: Record<string, unknown>;
}

export interface TrainerLoopOptions {
  gatewayUrl: string;
  rollout?: string;
  headers?: Record<string, string>;
  signal: AbortSignal;
  handle(request: PolledRequest): Promise<void>;
}

/** Runs until `signal` aborts; rejects on an unexpected answer from the gateway. */
export async function trainerLoop(o: TrainerLoopOptions): Promise<void> {
  const query = o.rollout ? `&rollout=${encodeURIComponent(o.rollout)}` : "";
  while (!o.signal.aborted) {
    let res: Response;
    try {
      res = await fetch(`${o.gatewayUrl}/api/requests/next?wait=1${query}`, {
        headers: o.headers,
        signal: o.signal,
      });
    } catch {
      if (o.signal.aborted) return;
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    if (res.status === 204) {
      await res.body?.cancel();
      continue;
    }
    if (!res.ok) throw new Error(`next: ${res.status} ${await res.text()}`);
    const req = await res.json() as PolledRequest;
    // Acknowledged at once: unacknowledged, it would be offered again after the ack timeout.
    const ack = await fetch(`${o.gatewayUrl}/api/requests/${req.request_id}/ack`, {
      method: "POST",
      headers: o.headers,
    });
    await ack.body?.cancel();
    if (!ack.ok) continue; // withdrawn meanwhile (agent gone, rollout ended)
    await o.handle(req);
  }
}

/** POSTs JSON to the trainer API; throws on a non-2xx answer. */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<void> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${new URL(url).pathname}: ${res.status} ${await res.text()}`);
  await res.body?.cancel();
}
