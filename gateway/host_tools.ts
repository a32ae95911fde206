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
import type { Rollout, RolloutStore } from "../trajectory/mod.ts";
import { resolveAgentRollout } from "./auth.ts";
import { GatewayError } from "./gateway_error.ts";
import { readJsonBody } from "./read_body.ts";
import { httpStatus } from "./http_errors.ts";

/** A host tool: gets the rollout and the JSON arguments, returns a JSON result. */
export type HostTool = (rollout: Rollout, args: unknown) => unknown | Promise<unknown>;

export const BUILTIN_HOST_TOOLS: Readonly<Record<string, HostTool>> = {
  submit: (_rollout, args) => ({ submitted: true, args: args ?? null }),
};

export interface HostToolOptions {
  store: RolloutStore;
  tools: Readonly<Record<string, HostTool>>;
  maxBodyBytes: number;
  adminToken?: string;
}

function jsonError(c: Context, e: unknown): Response {
  const status = httpStatus(e) ?? 500;
  const message = e instanceof Error ? e.message : String(e);
  return c.json(
    { error: { type: status === 404 ? "not_found" : "tool_error", message } },
    status as 400,
  );
}

export function hostToolRoutes(o: HostToolOptions): Hono {
  const app = new Hono();
  const rolloutOf = (c: Context) => {
    const r = resolveAgentRollout(o.store, c.req.param("id"), c.req.raw.headers, o);
    if (r.status !== "active") throw new GatewayError(409, `rollout ${r.id} is finished`);
    return r;
  };
  const args = async (c: Context) =>
    c.req.header("content-length") === "0" ? {} : await readJsonBody(c.req.raw, o.maxBodyBytes);

  for (const prefix of ["/rollout/:id/v1", "/v1"]) {
    app.post(`${prefix}/tools/:name`, async (c) => {
      try {
        const rollout = rolloutOf(c);
        const name = c.req.param("name");
        const tool = o.tools[name];
        if (!tool) {
          throw new GatewayError(
            404,
            `no host tool ${name} (available: ${Object.keys(o.tools).join(", ")})`,
          );
        }
        const input = await args(c);
        const result = await tool(rollout, input);
        rollout.hostCalls.push({ tool: name, args: input, result, at: Date.now() });
        return c.json({ result });
      } catch (e) {
        return jsonError(c, e);
      }
    });
    app.post(`${prefix}/exit`, async (c) => {
      try {
        const rollout = rolloutOf(c);
        const body = (await args(c) ?? {}) as { exit_code?: unknown; reason?: unknown };
        rollout.agentExit = {
          exit_code: typeof body.exit_code === "number" ? body.exit_code : null,
          reason: typeof body.reason === "string" ? body.reason : null,
          at: Date.now(),
        };
        return c.json({ ok: true });
      } catch (e) {
        return jsonError(c, e);
      }
    });
  }
  return app;
}
