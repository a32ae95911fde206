import assert from "node:assert/strict";
import { clientSession } from "./client_session.ts";

/** The headers and body of each request a CLI sent in the recorded captures. */
function recorded(path: string): { headers: Headers; body: unknown }[] {
  return Deno.readTextFileSync(new URL(path, import.meta.url)).trim().split("\n").map((l) => {
    const r = JSON.parse(l);
    return { headers: new Headers(r.headers), body: r.body };
  });
}

Deno.test("clientSession: Claude Code's and Codex's recorded session ids; none from pi over Chat", () => {
  const claude = recorded("./anthropic/__fixtures__/claude-code-2.1.330.jsonl");
  const codex = recorded("./responses/__fixtures__/codex-0.169.0.jsonl");
  const pi = recorded("./openai_chat/__fixtures__/pi-0.73.1.jsonl");
  for (const r of claude) {
    assert.equal(clientSession(r.headers, r.body), "70d28a1c-3cb4-4934-bae7-1a355ac73737");
  }
  for (const r of codex) {
    assert.equal(clientSession(r.headers, r.body), "01a202f7-93f9-7130-aa7f-0a69838d235c");
  }
  for (const r of pi) assert.equal(clientSession(r.headers, r.body), undefined);
});

Deno.test("clientSession: OpenCode's x-session-id, the same on its retries; none from Qwen Code or mini-swe-agent", () => {
  const opencode = recorded("./openai_chat/__fixtures__/opencode-1.18.33.retry.jsonl");
  assert.equal(opencode.length, 3);
  for (const r of opencode) {
    assert.equal(clientSession(r.headers, r.body), "ses_df3702f2fffexia4Q41zchatMJ");
  }
  const overAnthropic = recorded("./anthropic/__fixtures__/opencode-1.18.33.anthropic.jsonl");
  for (const r of overAnthropic) {
    assert.equal(clientSession(r.headers, r.body), "ses_df36ee234ffehJbqo0Cl4nt1lW");
  }
  for (
    const path of [
      "./openai_chat/__fixtures__/qwen-code-0.24.4.retry.jsonl",
      "./openai_chat/__fixtures__/mini-swe-agent-2.4.6.retry.jsonl",
    ]
  ) {
    for (const r of recorded(path)) assert.equal(clientSession(r.headers, r.body), undefined);
  }
});

Deno.test("clientSession: a Responses body's prompt_cache_key when no header names one", () => {
  assert.equal(clientSession(new Headers(), { prompt_cache_key: "pi-session" }), "pi-session");
  assert.equal(clientSession(new Headers(), { prompt_cache_key: "" }), undefined);
  assert.equal(clientSession(new Headers(), null), undefined);
  assert.equal(clientSession(new Headers({ "session-id": "h" }), { prompt_cache_key: "b" }), "h");
});
