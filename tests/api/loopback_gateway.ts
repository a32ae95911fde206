/**
 * Shared plumbing for the HTTP API tests: an in-process gateway on a real loopback socket, a
 * trainer-API client, rollouts, raw SSE reading, and the scripted policy's default script (a tool
 * call first, a final answer once a tool result is in the prompt).
 *
 * @module
 */
import assert from "node:assert/strict";
import { createGateway, type Gateway, type GatewayOptions } from "../../gateway/mod.ts";
import { parseSseText } from "../../generation/mod.ts";
import {
  answerText,
  type Script,
  ScriptedPolicy,
  sharedModel,
  toolCallText,
} from "../support/scripted_policy.ts";

export interface TestGateway {
  url: string;
  gw: Gateway;
  /** Calls the trainer API (with the admin token when the gateway has one). */
  api(method: string, path: string, body?: unknown): Promise<ApiResult>;
  /** A new rollout through the trainer API. */
  rollout(spec?: Record<string, unknown>): Promise<RolloutHandle>;
  /** Starts a scripted policy against this gateway; stopped by `close`. */
  policy(script?: Script, options?: { rollout?: string }): ScriptedPolicy;
  close(): Promise<void>;
}

export interface ApiResult {
  status: number;
  // deno-lint-ignore no-explicit-any
  json: any;
  headers: Headers;
}

export interface RolloutHandle {
  id: string;
  token: string;
  base_url: string;
}

export type GatewayTestOptions = Partial<GatewayOptions>;

/** A gateway served by `Deno.serve` on a free loopback port. */
export async function startGateway(options: GatewayTestOptions = {}): Promise<TestGateway> {
  const model = options.model ?? await sharedModel();
  const gw = createGateway({ keepAliveMs: 200, ...options, model });
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, gw.app.fetch);
  const url = `http://127.0.0.1:${server.addr.port}`;
  const policies: ScriptedPolicy[] = [];
  const adminHeaders: Record<string, string> = options.adminToken
    ? { authorization: `Bearer ${options.adminToken}` }
    : {};

  const api = (method: string, path: string, body?: unknown) =>
    call(url + "/api" + path, { method, headers: adminHeaders, body });

  return {
    url,
    gw,
    api,
    async rollout(spec = {}) {
      const r = await api("POST", "/rollouts", spec);
      assert.equal(r.status, 201, JSON.stringify(r.json));
      return r.json as RolloutHandle;
    },
    policy(script = toolThenAnswer, opts = {}) {
      const p = new ScriptedPolicy(url, script, { ...opts, adminToken: options.adminToken })
        .start();
      policies.push(p);
      return p;
    },
    async close() {
      await Promise.all(policies.map((p) => p.stop()));
      // A failed test may leave an agent waiting on the gate; release it so shutdown can finish.
      gw.rollouts.abandon("test gateway closing");
      await server.shutdown();
    },
  };
}

const CALL_TIMEOUT_MS = 10_000;

/**
 * One HTTP call whose body is always consumed. `body` is JSON-encoded unless it is a string
 * (sent as is, so tests can send malformed JSON).
 */
export async function call(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<ApiResult> {
  const headers: Record<string, string> = { ...init.headers };
  let body: string | undefined;
  if (init.body !== undefined) {
    body = typeof init.body === "string" ? init.body : JSON.stringify(init.body);
    headers["content-type"] ??= "application/json";
  }
  // A request the gateway wrongly parks (say, as a pending turn nobody answers) fails the test
  // instead of hanging it.
  const abort = new AbortController();
  const timer = setTimeout(
    () => abort.abort(new Error(`no answer in ${CALL_TIMEOUT_MS} ms: ${init.method} ${url}`)),
    CALL_TIMEOUT_MS,
  );
  let res: Response, text: string;
  try {
    res = await fetch(url, { method: init.method ?? "GET", headers, body, signal: abort.signal });
    text = await res.text();
  } finally {
    clearTimeout(timer);
  }
  let json: unknown = null;
  if (text !== "") {
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
  }
  return { status: res.status, json, headers: res.headers };
}

/** POSTs to an agent endpoint of a rollout (`/rollout/<id>/v1/<path>`) with its token. */
export function agentCall(
  gw: TestGateway,
  rollout: RolloutHandle,
  path: string,
  body: unknown,
): Promise<ApiResult> {
  return call(`${gw.url}/rollout/${rollout.id}/v1/${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${rollout.token}` },
    body,
  });
}

export interface SseMessage {
  event?: string;
  data: string;
  /** `JSON.parse(data)` when it parses. */
  // deno-lint-ignore no-explicit-any
  json?: any;
}

/** Splits a raw SSE body into its events (comments dropped) and its comment lines. */
export function parseSse(raw: string): { events: SseMessage[]; comments: string[] } {
  const parsed = parseSseText(raw);
  const events = parsed.events.map(({ event, data }) => {
    const message: SseMessage = { data };
    if (event !== undefined) message.event = event;
    try {
      message.json = JSON.parse(data);
    } catch { /* e.g. [DONE] */ }
    return message;
  });
  return { events, comments: parsed.comments };
}

/** The default tool the scripted policy calls. */
export const READ_FILE_TOOL = {
  name: "read_file",
  description: "Read a file from the workspace.",
  parameters: {
    type: "object",
    properties: { path: { type: "string" } },
    required: ["path"],
  },
};

export const TOOL_REASONING = "I should look at the README first.";
export const TOOL_ARGS = { path: "README.md" };
export const FINAL_REASONING = "The file says hello.";
export const FINAL_TEXT = "The README says hello.";
export const TOOL_RESULT = "# hello";

/** Calls `read_file` until a tool result is in the prompt, then answers. */
export const toolThenAnswer: Script = ({ text }) =>
  text.includes("<tool_response>")
    ? answerText(FINAL_REASONING, FINAL_TEXT)
    : toolCallText(TOOL_REASONING, READ_FILE_TOOL.name, TOOL_ARGS);

/** Always answers with text (no tool call). */
export const plainAnswer: Script = ({ turn }) => answerText("thinking", `answer ${turn}`);

/** `GET /api/rollouts/:id`, asserted 200. */
export async function getRollout(gw: TestGateway, id: string) {
  const r = await gw.api("GET", `/rollouts/${id}`);
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return r.json;
}

/** Takes the next pending request of a rollout (waiting up to 5 s). */
export async function take(gw: TestGateway, rollout: string) {
  const next = await gw.api("GET", `/requests/next?wait=5&rollout=${rollout}`);
  assert.equal(next.status, 200, JSON.stringify(next.json));
  return next.json;
}

/** Runs `fn` against a fresh gateway, closed afterwards whatever happens. */
export async function withGateway(
  options: GatewayTestOptions,
  fn: (gw: TestGateway) => Promise<void>,
): Promise<void> {
  const gw = await startGateway(options);
  try {
    await fn(gw);
  } finally {
    await gw.close();
  }
}
