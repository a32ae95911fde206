/**
 * One route table: the calls a replica's front routes by rollout are the app's own routes, read
 * from the same table (`agent/agent_endpoints.ts`), each with its rollout, its token, its body cap
 * and its protocol. A route added to the app about one rollout that the table does not know fails
 * here, and so does a table row the app does not serve.
 */
import assert from "node:assert/strict";
import { createGateway, DEFAULT_LIMITS } from "./app.ts";
import { AGENT_ENDPOINTS } from "./agent/mod.ts";
import { rolloutCall } from "./rollout_calls.ts";
import { PolicyModel } from "../model/mod.ts";

const model = await PolicyModel.load();
const gw = createGateway({ model });
const limits = DEFAULT_LIMITS;

/**
 * A concrete path for a route pattern (`:id` is `r1`, Gemini's `:call{.+:method}` a model and that
 * method, any other parameter `x`).
 */
const concrete = (pattern: string) =>
  pattern.replace(":id", "r1").replace(/:[A-Za-z_]+\{\.\+:(\w+)\}/, "gemini-2.5-flash:$1")
    .replace(/\/:[A-Za-z_]+/g, "/x");

const routes = gw.app.routes.filter((r) => r.method !== "ALL" || !r.path.endsWith("*"));

Deno.test("the agent routes a rollout's front routes: the table's rows, one per protocol", () => {
  assert.deepEqual(
    AGENT_ENDPOINTS.map((e) => `${e.method} ${e.path} ${e.adapter?.name ?? "host"} ${e.limit}`),
    [
      "POST v1/messages anthropic agent",
      "POST v1/messages/count_tokens anthropic agent",
      "POST v1/chat/completions chat agent",
      "POST v1/responses responses agent",
      "GET v1/models chat agent",
      "POST v1beta/models/:call{.+:generateContent} gemini agent",
      "POST v1beta/models/:call{.+:streamGenerateContent} gemini agent",
      "POST v1beta/models/:call{.+:countTokens} gemini agent",
      "POST v1/tools/:name host tool",
      "POST v1/exit host tool",
    ],
  );
});

Deno.test("every app route about one rollout is a rollout call, and every table row is an app route", () => {
  const scoped = routes.filter((r) => r.path.startsWith("/rollout/:id/"));
  assert.ok(scoped.length >= AGENT_ENDPOINTS.length, `${scoped.length} scoped routes`);
  for (const r of scoped) {
    const call = rolloutCall(new URL(`http://gw${concrete(r.path)}`), new Headers(), limits);
    assert.ok(call, `${r.method} ${r.path} is not in the route table`);
    assert.equal(call.id, "r1");
    assert.equal(call.caller, "agent");
  }
  for (const e of AGENT_ENDPOINTS) {
    for (const prefix of ["/rollout/:id/", "/"]) {
      assert.ok(
        routes.some((r) => r.method === e.method && r.path === prefix + e.path),
        `the app does not serve ${e.method} ${prefix}${e.path}`,
      );
    }
  }
  const trainer = routes.filter((r) => r.path.startsWith("/api/rollouts/:id"));
  assert.ok(trainer.length >= 5, `${trainer.length} trainer routes about one rollout`);
  for (const r of trainer) {
    const call = rolloutCall(new URL(`http://gw${concrete(r.path)}`), new Headers(), limits);
    assert.deepEqual([call?.id, call?.caller], ["r1", "trainer"], r.path);
    assert.equal(call!.maxBodyBytes, limits.maxTrainerBodyBytes);
  }
});

Deno.test("a rollout call: by path id or by token, the protocol's token, cap and error shape", () => {
  const bearer = new Headers({ authorization: "Bearer rg_abc" });
  const chat = rolloutCall(new URL("http://gw/rollout/a%3A1/v1/chat/completions"), bearer, limits)!;
  assert.deepEqual([chat.id, chat.token, chat.maxBodyBytes], [
    "a:1",
    "rg_abc",
    limits.maxBodyBytes,
  ]);
  assert.equal(chat.streams({ stream: true }), true);
  assert.equal(chat.streams({}), false);
  assert.equal(
    (chat.errors.errorBody(503, "m") as { error: { type: string } }).error.type,
    "server_error",
  );

  const bare = rolloutCall(
    new URL("http://gw/v1/messages"),
    new Headers({ "x-api-key": "rg_k" }),
    limits,
  )!;
  assert.deepEqual([bare.id, bare.token], [undefined, "rg_k"]);
  assert.equal((bare.errors.errorBody(503, "m") as { type: string }).type, "error");

  // Gemini: the token in x-goog-api-key or ?key=, streaming named by the path.
  const gemini = (path: string, headers = new Headers()) =>
    rolloutCall(new URL(`http://gw${path}`), headers, limits)!;
  const stream = gemini(
    "/rollout/r1/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key=rg_q",
  );
  assert.deepEqual([stream.id, stream.token, stream.streams({})], ["r1", "rg_q", true]);
  const once = gemini(
    "/v1beta/models/gemini-2.5-flash:generateContent",
    new Headers({ "x-goog-api-key": "rg_g" }),
  );
  assert.deepEqual([once.id, once.token, once.streams({ stream: true })], [
    undefined,
    "rg_g",
    false,
  ]);
  assert.equal(gemini("/rollout/r1/v1beta/models/m:countTokens").maxBodyBytes, limits.maxBodyBytes);
  assert.equal(
    rolloutCall(new URL("http://gw/v1beta/models/m:listen"), new Headers(), limits),
    undefined,
  );

  const tool = rolloutCall(new URL("http://gw/rollout/r1/v1/tools/submit"), new Headers(), limits)!;
  assert.equal(tool.maxBodyBytes, limits.maxToolBodyBytes);
  assert.equal(tool.streams({ stream: true }), false);

  const poll = rolloutCall(
    new URL("http://gw/api/requests/next?rollout=r9"),
    new Headers(),
    limits,
  );
  assert.deepEqual([poll?.id, poll?.caller], ["r9", "trainer"]);
  for (
    const other of ["/api/requests/next", "/api/status", "/api/rollouts", "/health", "/v1/nope"]
  ) {
    assert.equal(
      rolloutCall(new URL(`http://gw${other}`), new Headers(), limits),
      undefined,
      other,
    );
  }
});
