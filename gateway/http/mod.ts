/**
 * HTTP plumbing every wing uses: the Node server bridge with its timeouts and connection caps,
 * the request body as a stream that cannot throw outside a handler, the capped JSON body reader,
 * the SSE writer with keep-alives, who is calling (admin or a rollout's token), the viewer's
 * cookie and zod issues turned into messages that name the field.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { presentedToken, readJsonBody } from "./mod.ts";
 *
 * const post = (body: string) =>
 *   new Request("http://127.0.0.1/v1/messages", {
 *     method: "POST",
 *     headers: { "content-type": "application/json", authorization: "Bearer rg-123" },
 *     body,
 *   });
 * assert.equal(presentedToken(post("{}").headers), "rg-123");
 * assert.deepEqual(await readJsonBody(post('{"a":1}'), 1024), { a: 1 });
 * await assert.rejects(readJsonBody(post("x".repeat(2048)), 1024), { status: 413 });
 * ```
 *
 * @module
 */
export { DEFAULT_MAX_BODY_BYTES, parseJsonBody, readBodyBytes, readJsonBody } from "./read_body.ts";
export { DEFAULT_KEEPALIVE_MS, sseResponse } from "./sse_response.ts";
export { agentAccess, presentedToken, resolveAgentRollout } from "./auth.ts";
export { describeIssues, explainIssues } from "./zod_issues.ts";
export { uiAuth } from "./ui_auth.ts";
export { type ConnectionLimits, type HttpTimeouts, serveHttp } from "./http_server.ts";
export { freeBuffer } from "./body_stream.ts";
