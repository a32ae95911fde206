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
 * The rollout an agent request belongs to: by path id when present, else by `token` (as the
 * route's protocol carries it, `agent_endpoints.ts`).
 *
 * With a path id, a token that belongs to a different rollout is refused (403), whether a
 * rollout of that id exists or not, and with an admin token configured a request without its
 * rollout's token is refused (401) before the id is looked up: neither answer tells ids apart.
 * Without an admin token configured, a missing or foreign non-rollout token is tolerated (agents
 * need some key to start at all).
 */
export function resolveAgentRollout(
  store: Pick<RolloutActions, "byToken" | "require">,
  pathId: string | undefined,
  token: string | null,
  options: AgentAuthOptions,
): Rollout {
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
  const refused = agentAccess(pathId, token, byToken?.id, options.adminToken);
  if (refused) throw refused;
  const rollout = store.require(pathId);
  rollout.touch();
  return rollout;
}

/**
 * Why an agent's call on rollout `pathId` is refused, knowing which rollout its `token` opens
 * (`opens`, undefined when none); undefined when it may go on (the rollout is then looked up).
 * One gateway and a replica's front decide with this, before any body is read.
 */
export function agentAccess(
  pathId: string,
  token: string | null,
  opens: string | undefined,
  adminToken?: string,
): GatewayError | undefined {
  if (opens !== undefined) {
    if (opens === pathId) return undefined;
    return new GatewayError(403, `this token belongs to another rollout than ${pathId}`);
  }
  if (adminToken && !sameToken(token, adminToken)) {
    return new GatewayError(401, `rollout ${pathId} requires its token`);
  }
  return undefined;
}
