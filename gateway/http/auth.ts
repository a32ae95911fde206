/**
 * Who is calling: the trainer (admin token, when one is configured) or an agent (its rollout's
 * token). A rollout's token never opens another rollout.
 *
 * @module
 */
import type { Rollout, RolloutActions } from "../../trajectory/mod.ts";
import { GatewayError } from "../gateway_error.ts";
import { sameToken } from "../security/mod.ts";

/**
 * The credential a request carries: `Authorization: Bearer …`, `x-api-key`, or Gemini's
 * `x-goog-api-key`; with `url` (agent calls), also Gemini's `?key=`.
 */
export function presentedToken(headers: Headers, url?: URL): string | null {
  const auth = headers.get("authorization");
  if (auth) {
    const m = /^Bearer\s+(.+)$/i.exec(auth.trim());
    if (m) return m[1].trim();
  }
  return headers.get("x-api-key")?.trim() || headers.get("x-goog-api-key")?.trim() ||
    url?.searchParams.get("key")?.trim() || null;
}

export interface AgentAuthOptions {
  /** When set, agent requests must carry their rollout's token (or this admin token). */
  adminToken?: string;
}

/**
 * The rollout an agent request belongs to: by path id when present, else by token.
 *
 * With a path id, a token that belongs to a different rollout is refused (403). Without an
 * admin token configured, a missing or foreign non-rollout token is tolerated (agents need some
 * key to start at all); with one configured, the rollout's own token is required.
 */
export function resolveAgentRollout(
  store: Pick<RolloutActions, "byToken" | "require">,
  pathId: string | undefined,
  request: Pick<Request, "headers" | "url">,
  options: AgentAuthOptions,
): Rollout {
  const token = presentedToken(request.headers, new URL(request.url));
  const byToken = token ? store.byToken(token) : undefined;
  if (pathId === undefined) {
    if (!byToken) {
      throw new GatewayError(
        401,
        "no rollout: call /rollout/<id>/v1/... or authenticate with the rollout's token",
      );
    }
    byToken.touch();
    return byToken;
  }
  const rollout = store.require(pathId);
  if (byToken && byToken !== rollout) {
    throw new GatewayError(403, `this token belongs to another rollout than ${pathId}`);
  }
  if (options.adminToken && !byToken && !sameToken(token, options.adminToken)) {
    throw new GatewayError(401, `rollout ${pathId} requires its token`);
  }
  rollout.touch();
  return rollout;
}
