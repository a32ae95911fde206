/**
 * Which calls belong to one rollout, read from the route tables before a body is read: the agent
 * routes and host tools (`agent/agent_endpoints.ts`, under `/rollout/:id/` or bare with the
 * rollout's token) and the trainer's calls about one rollout (`/api/rollouts/:id…`,
 * `/api/requests/next?rollout=`). For each: the rollout (by id, or by the token the call carries),
 * who may make it, the body cap that applies, how it is refused in its protocol, and whether its
 * body asks for a stream. A replica's front (`cluster/`) routes on this and nothing else; the
 * routes it describes are the app's own (`rollout_calls_test.ts` checks every one).
 *
 * @module
 */
import { agentEndpoint, type ErrorShape } from "./agent/mod.ts";
import { presentedToken } from "./http/mod.ts";
import { trainerErrorBody } from "./trainer/mod.ts";
import type { GatewayLimits } from "./app.ts";

export interface RolloutCall {
  /** The rollout the path (or query) names; unset: the one `token` belongs to. */
  id?: string;
  /** The credential the call carries, as its protocol carries it. */
  token: string | null;
  /** `agent`: the rollout's token (or the admin token) opens it; `trainer`: the admin token. */
  caller: "agent" | "trainer";
  /** The largest body the gateway reads for it. */
  maxBodyBytes: number;
  /** How a refusal is written in its protocol. */
  errors: ErrorShape;
  /** Whether its (parsed) body asks for a streamed answer. */
  streams(body: unknown): boolean;
}

const TRAINER_ERRORS: ErrorShape = { errorBody: trainerErrorBody };

const never = () => false;

/** The rollout call `method url` is (headers: its credential), or undefined for any other call. */
export function rolloutCall(
  url: URL,
  headers: Headers,
  limits: Pick<GatewayLimits, "maxBodyBytes" | "maxToolBodyBytes" | "maxTrainerBodyBytes">,
): RolloutCall | undefined {
  const path = url.pathname;
  if (path.startsWith("/api/")) {
    const id = /^\/api\/rollouts\/([^/]+)/.exec(path)?.[1] ??
      (path === "/api/requests/next" ? url.searchParams.get("rollout") ?? undefined : undefined);
    if (id === undefined) return undefined;
    return {
      id: decodeURIComponent(id),
      token: presentedToken(headers),
      caller: "trainer",
      maxBodyBytes: limits.maxTrainerBodyBytes,
      errors: TRAINER_ERRORS,
      streams: never,
    };
  }
  const scoped = /^\/rollout\/([^/]+)\/(.+)$/.exec(path);
  const rest = scoped ? scoped[2] : path.slice(1);
  const endpoint = agentEndpoint(rest);
  if (!endpoint) return undefined;
  return {
    ...(scoped ? { id: decodeURIComponent(scoped[1]) } : {}),
    token: endpoint.token(headers, url),
    caller: "agent",
    maxBodyBytes: endpoint.limit === "tool" ? limits.maxToolBodyBytes : limits.maxBodyBytes,
    errors: endpoint.errors,
    streams: (body) => endpoint.streams?.(body, url) ?? false,
  };
}
