/**
 * Host-side tools and the agent-exit signal, per rollout:
 *
 * - `POST /rollout/:id/v1/tools/:name` runs a trusted tool outside the sandbox (the agent reaches
 *   it through the same bridge as its LLM calls) and answers `{result}`;
 * - `POST /rollout/:id/v1/exit` tells the host that the agent is done (`{exit_code?, reason?}`),
 *   so a runner need not guess from process state.
 *
 * Every call is recorded on the rollout (`host_calls`, `agent_exit` in `GET /api/rollouts/:id`).
 * Built in: `submit` (the agent declares its work finished; args are kept as given).
 *
 * @module
 */
import { type Context, Hono } from "hono";
import type { Rollout, RolloutActions } from "../../trajectory/mod.ts";
import { readJsonBody, resolveAgentRollout } from "../http/mod.ts";
import { GatewayError } from "../gateway_error.ts";
import { httpStatus } from "../http_errors.ts";
import { AGENT_ENDPOINTS, type AgentEndpoint, HOST_TOOL_ERRORS } from "./agent_endpoints.ts";

/** A host tool: gets the rollout and the JSON arguments, returns a JSON result. */
export type HostTool = (rollout: Rollout, args: unknown) => unknown | Promise<unknown>;

export const BUILTIN_HOST_TOOLS: Readonly<Record<string, HostTool>> = {
  submit: (_rollout, args) => ({ submitted: true, args: args ?? null }),
};

export interface HostToolOptions {
  rollouts: RolloutActions;
  tools: Readonly<Record<string, HostTool>>;
  /** Largest arguments body of one call. */
  maxBodyBytes: number;
  /** Most JSON (arguments + results) one rollout's recorded calls may hold. */
  maxBytesPerRollout: number;
  adminToken?: string;
}

export const DEFAULT_MAX_TOOL_BODY_BYTES = 4 * 1024 * 1024;
export const DEFAULT_MAX_TOOL_BYTES_PER_ROLLOUT = 32 * 1024 * 1024;

function jsonBytes(value: unknown): number {
  return value === undefined ? 0 : JSON.stringify(value).length;
}

function jsonError(c: Context, e: unknown): Response {
  const status = httpStatus(e) ?? 500;
  const message = e instanceof Error ? e.message : String(e);
  return c.json(HOST_TOOL_ERRORS.errorBody(status, message) as object, status as 400);
}

const endpoint = (serves: AgentEndpoint["serves"]) =>
  AGENT_ENDPOINTS.find((e) => e.serves === serves)!;

export function hostToolRoutes(o: HostToolOptions): Hono {
  const app = new Hono();
  const rolloutOf = (c: Context, e: AgentEndpoint) => {
    const token = e.token(c.req.raw.headers, new URL(c.req.url));
    const r = resolveAgentRollout(o.rollouts, c.req.param("id"), token, o);
    if (r.status !== "active") throw new GatewayError(409, `rollout ${r.id} is finished`);
    return r;
  };
  const args = async (c: Context) =>
    c.req.header("content-length") === "0" ? {} : await readJsonBody(c.req.raw, o.maxBodyBytes);

  const [toolCall, exit] = [endpoint("tool"), endpoint("exit")];
  for (const prefix of ["/rollout/:id/", "/"]) {
    app.on(toolCall.method, prefix + toolCall.path, async (c) => {
      try {
        const rollout = rolloutOf(c, toolCall);
        const name = c.req.param("name")!;
        const tool = o.tools[name];
        if (!tool) {
          throw new GatewayError(
            404,
            `no host tool ${name} (available: ${Object.keys(o.tools).join(", ")})`,
          );
        }
        const input = await args(c);
        // Recorded calls are answered in `GET /api/rollouts/:id`: bounded, so that stays a
        // response and not a string too long to build. (Results come from trusted host code.)
        const argsBytes = jsonBytes(input);
        if (rollout.hostCallBytes + argsBytes > o.maxBytesPerRollout) {
          throw new GatewayError(
            413,
            `rollout ${rollout.id}'s host calls already hold ${rollout.hostCallBytes} bytes; ${argsBytes} more would pass the limit of ${o.maxBytesPerRollout} per rollout (--max-tool-bytes-per-rollout)`,
          );
        }
        const result = await tool(rollout, input);
        const bytes = argsBytes + jsonBytes(result);
        await o.rollouts.hostCall(rollout, {
          tool: name,
          args: input,
          result,
          at: Date.now(),
          bytes,
        });
        return c.json({ result });
      } catch (e) {
        return jsonError(c, e);
      }
    });
    app.on(exit.method, prefix + exit.path, async (c) => {
      try {
        const rollout = rolloutOf(c, exit);
        const body = (await args(c) ?? {}) as { exit_code?: unknown; reason?: unknown };
        await o.rollouts.agentExit(rollout, {
          exit_code: typeof body.exit_code === "number" ? body.exit_code : null,
          reason: typeof body.reason === "string" ? body.reason : null,
        });
        return c.json({ ok: true });
      } catch (e) {
        return jsonError(c, e);
      }
    });
  }
  return app;
}
