/**
 * The agent client's own session id, from what each CLI sends (see
 * `reference/agent-clients.md`, "Session identity"): Claude Code's `x-claude-code-session-id`,
 * Codex's `session-id` (equal to its thread id), OpenCode's `x-session-id` (one per OpenCode
 * session, kept on its retries), or a Responses body's `prompt_cache_key` (pi in Responses mode
 * sets it to its session id). pi in Chat mode, Qwen Code and mini-swe-agent send none: their
 * retries are matched on content alone.
 *
 * @module
 */

const HEADERS = ["x-claude-code-session-id", "session-id", "x-session-id"];

/**
 * @example
 * ```ts
 * clientSession(new Headers({ "x-claude-code-session-id": "70d2" }), {}); // "70d2"
 * clientSession(new Headers(), { prompt_cache_key: "th_1" }); // "th_1"
 * clientSession(new Headers(), {}); // undefined
 * ```
 */
export function clientSession(headers: Headers, body: unknown): string | undefined {
  for (const h of HEADERS) {
    const v = headers.get(h);
    if (v) return v;
  }
  const key = (body as { prompt_cache_key?: unknown } | null)?.prompt_cache_key;
  return typeof key === "string" && key !== "" ? key : undefined;
}
