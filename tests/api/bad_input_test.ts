/**
 * Bad input over real HTTP: every agent endpoint and the trainer API answer malformed, invalid,
 * oversized, unauthorised or misdirected requests with an error in the caller's protocol shape,
 * and afterwards the gateway still serves another rollout normally with nothing recorded where
 * it should not be.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  agentCall,
  type ApiResult,
  call,
  type GatewayTestOptions,
  getRollout,
  parseSse,
  plainAnswer,
  type RolloutHandle,
  startGateway,
  take,
  type TestGateway,
} from "./loopback_gateway.ts";

type Shape = "anthropic" | "openai" | "google" | "trainer";

const ANTHROPIC_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  409: "invalid_request_error",
  413: "request_too_large",
  502: "api_error",
  503: "overloaded_error",
};
const OPENAI_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "invalid_request_error",
  409: "invalid_request_error",
  413: "invalid_request_error",
  502: "server_error",
  503: "server_error",
};
const GOOGLE_STATUSES: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  409: "ABORTED",
  413: "INVALID_ARGUMENT",
  502: "INTERNAL",
  503: "UNAVAILABLE",
};
const TRAINER_TYPES: Record<number, string> = {
  400: "invalid_request",
  401: "unauthorized",
  404: "not_found",
  409: "conflict",
  410: "gone",
  413: "request_too_large",
  429: "rate_limited",
};

/** The error `message` of a protocol-shaped error body, after checking the whole shape. */
function assertError(r: ApiResult, status: number, shape: Shape, message?: RegExp): string {
  const body = JSON.stringify(r.json);
  assert.equal(r.status, status, body);
  assert.match(r.headers.get("content-type") ?? "", /application\/json/);
  if (shape === "anthropic") {
    assert.equal(r.json.type, "error", body);
    assert.equal(r.json.error.type, ANTHROPIC_TYPES[status], body);
  } else if (shape === "openai") {
    assert.equal(r.json.error.type, OPENAI_TYPES[status], body);
    assert.ok("param" in r.json.error && "code" in r.json.error, body);
  } else if (shape === "google") {
    assert.equal(r.json.error.code, status, body);
    assert.equal(r.json.error.status, GOOGLE_STATUSES[status], body);
  } else {
    assert.equal(r.json.error.type, TRAINER_TYPES[status], body);
  }
  assert.equal(typeof r.json.error.message, "string", body);
  assert.ok(r.json.error.message.length > 0, body);
  if (message) assert.match(r.json.error.message, message);
  return r.json.error.message;
}

interface Endpoint {
  name: string;
  method: "GET" | "POST";
  /** Path below the agent base (`/rollout/<id>`, or nothing for the bare routes). */
  path: string;
  shape: Shape;
  /** A valid body (POST endpoints). */
  good?: Record<string, unknown>;
  /** Whether a valid request becomes a turn. */
  turn: boolean;
  /** Bodies that violate the schema, with the field the error must name. */
  invalid: { body: unknown; field: RegExp }[];
}

const HI_ANTHROPIC = { model: "m", max_tokens: 64, messages: [{ role: "user", content: "hi" }] };
const HI_CHAT = { model: "m", messages: [{ role: "user", content: "hi" }] };
const HI_GEMINI = { contents: [{ role: "user", parts: [{ text: "hi" }] }] };

const ENDPOINTS: Endpoint[] = [
  {
    name: "messages",
    method: "POST",
    path: "v1/messages",
    shape: "anthropic",
    turn: true,
    good: { model: "m", max_tokens: 64, messages: [{ role: "user", content: "hi" }] },
    invalid: [
      {
        body: { model: "m", max_tokens: 64, messages: [{ role: "user", content: 5 }] },
        field: /^messages\[0\]\.content: /,
      },
      {
        body: {
          model: "m",
          max_tokens: 64,
          messages: [{ role: "user", content: [{ type: "text", text: 1 }] }],
        },
        field: /^messages\[0\]\.content\[0\]\.text: /,
      },
      { body: { model: "m", messages: [{ role: "user", content: "x" }] }, field: /^max_tokens: / },
      { body: { max_tokens: 5, messages: [] }, field: /^model: / },
      { body: [1, 2], field: /JSON object/ },
      { body: { model: "m", max_tokens: 64, messages: [] }, field: /no messages/ },
      // Sampling values a policy engine cannot use (temperature -1 and top_p 5 were accepted).
      {
        body: { ...HI_ANTHROPIC, temperature: -1 },
        field: /temperature: .*>=0/,
      },
      { body: { ...HI_ANTHROPIC, top_p: 5 }, field: /top_p: .*<=1/ },
    ],
  },
  {
    name: "count_tokens",
    method: "POST",
    path: "v1/messages/count_tokens",
    shape: "anthropic",
    turn: false,
    good: { model: "m", messages: [{ role: "user", content: "hi" }] },
    invalid: [
      { body: { model: "m", messages: "nope" }, field: /^messages: / },
      {
        body: { model: "m", messages: [{ role: "robot", content: "x" }] },
        field: /^messages\[0\]\.role: /,
      },
      { body: { model: "m", messages: [] }, field: /no messages/ },
    ],
  },
  {
    name: "chat/completions",
    method: "POST",
    path: "v1/chat/completions",
    shape: "openai",
    turn: true,
    good: { model: "m", messages: [{ role: "user", content: "hi" }] },
    invalid: [
      {
        body: {
          model: "m",
          messages: [{ role: "user", content: "x" }, { role: "tool", content: "r" }],
        },
        field: /messages\[1\]\.tool_call_id: /,
      },
      { body: { model: "m", messages: [] }, field: /messages: / },
      {
        body: { model: "m", messages: [{ role: "user", content: "x" }], max_tokens: -3 },
        field: /max_tokens: /,
      },
      { body: null, field: /body: / },
      { body: { ...HI_CHAT, temperature: -1 }, field: /temperature: .*>=0/ },
      { body: { ...HI_CHAT, top_p: 5 }, field: /top_p: .*<=1/ },
      { body: { ...HI_CHAT, temperature: 2.5 }, field: /temperature: .*<=2/ },
    ],
  },
  {
    name: "responses",
    method: "POST",
    path: "v1/responses",
    shape: "openai",
    turn: true,
    good: { model: "m", input: "hi" },
    invalid: [
      {
        body: { model: "m", input: [{ type: "function_call_output", output: "x" }] },
        field: /input\[0\]\.call_id: /,
      },
      { body: { model: "m" }, field: /input: / },
      {
        body: { model: "m", input: "x", tools: [{ type: "function" }] },
        field: /tools\[0\]\.name: /,
      },
      { body: { model: "m", input: [] }, field: /no messages/ },
      { body: { model: "m", input: "x", temperature: -1 }, field: /temperature: .*>=0/ },
      { body: { model: "m", input: "x", top_p: 5 }, field: /top_p: .*<=1/ },
    ],
  },
  { name: "models", method: "GET", path: "v1/models", shape: "openai", turn: false, invalid: [] },
  ...(["generateContent", "streamGenerateContent"] as const).map((method): Endpoint => ({
    name: method,
    method: "POST",
    path: `v1beta/models/m:${method}${method === "streamGenerateContent" ? "?alt=sse" : ""}`,
    shape: "google",
    turn: true,
    good: HI_GEMINI,
    invalid: [
      { body: { contents: "hi" }, field: /^contents: / },
      { body: { contents: [{ role: "robot", parts: [] }] }, field: /^contents\[0\]\.role: / },
      {
        body: { contents: [{ role: "user", parts: [{ text: 1 }] }] },
        field: /^contents\[0\]\.parts\[0\]\.text: /,
      },
      {
        body: { ...HI_GEMINI, tools: [{ functionDeclarations: [{ description: "x" }] }] },
        field: /^tools\[0\]\.functionDeclarations\[0\]\.name: /,
      },
      { body: [1, 2], field: /JSON object/ },
      { body: { contents: [] }, field: /no messages/ },
      {
        body: { ...HI_GEMINI, generationConfig: { temperature: -1 } },
        field: /generationConfig\.temperature: .*>=0/,
      },
      { body: { ...HI_GEMINI, generationConfig: { topP: 5 } }, field: /topP: .*<=1/ },
      {
        body: { ...HI_GEMINI, generationConfig: { candidateCount: 2 } },
        field: /candidateCount: the gateway answers one candidate, not 2/,
      },
    ],
  })),
  {
    name: "countTokens",
    method: "POST",
    path: "v1beta/models/m:countTokens",
    shape: "google",
    turn: false,
    good: { contents: HI_GEMINI.contents },
    invalid: [
      { body: { contents: [{ parts: "x" }] }, field: /^contents\[0\]\.parts: / },
      {
        body: { generateContentRequest: { contents: 5 } },
        field: /^generateContentRequest\.contents: /,
      },
    ],
  },
];

/**
 * A gateway with a control rollout served by a scripted policy. `check()` runs a good turn on the
 * control rollout and asserts that every rollout holds exactly the turns the test expects.
 */
async function withControl(
  options: GatewayTestOptions,
  fn: (env: {
    gw: TestGateway;
    control: RolloutHandle;
    check(label: string): Promise<void>;
    /** Expected turn counts of non-control rollouts (0 when absent). */
    expected: Map<string, Record<string, number>>;
    /** A fresh rollout a test may abuse. */
    victim(spec?: Record<string, unknown>): Promise<RolloutHandle>;
    /** Tells the bookkeeping that a rollout was deleted. */
    forget(id: string): void;
  }) => Promise<void>,
): Promise<void> {
  const gw = await startGateway(options);
  try {
    const control = await gw.rollout({ id: "control" });
    gw.policy(plainAnswer, { rollout: control.id });
    const expected = new Map<string, Record<string, number>>();
    const known = new Set([control.id]);
    let good = 0;
    const check = async (label: string) => {
      const r = await agentCall(gw, control, "chat/completions", {
        model: "m",
        messages: [{ role: "user", content: `ping ${good}` }],
      });
      assert.equal(r.status, 200, `${label}: control turn got ${JSON.stringify(r.json)}`);
      assert.equal(r.json.choices[0].message.content, `answer ${good}`, label);
      good++;
      const list = await gw.api("GET", "/rollouts");
      assert.equal(list.status, 200);
      const ids = list.json.rollouts.map((s: { id: string }) => s.id).sort();
      assert.deepEqual(ids, [...known].sort(), `${label}: rollouts`);
      for (const s of list.json.rollouts) {
        const want = s.id === control.id
          ? { total: good, done: good, pending: 0, failed: 0 }
          : { total: 0, done: 0, pending: 0, failed: 0, ...expected.get(s.id) };
        assert.deepEqual(s.turns, want, `${label}: turns of ${s.id}`);
      }
      const pending = [...expected.values()].reduce((n, t) => n + (t.pending ?? 0), 0);
      assert.equal(gw.gw.gate.pendingCount(), pending, `${label}: pending requests`);
    };
    const victim = async (spec: Record<string, unknown> = {}) => {
      const r = await gw.rollout(spec);
      known.add(r.id);
      return r;
    };
    const forget = (id: string) => {
      known.delete(id);
      expected.delete(id);
    };
    await fn({ gw, control, check, expected, victim, forget });
    await check("end");
  } finally {
    await gw.close();
  }
}

function agentUrl(gw: TestGateway, rolloutId: string | null, path: string): string {
  return rolloutId === null ? `${gw.url}/${path}` : `${gw.url}/rollout/${rolloutId}/${path}`;
}

function send(
  gw: TestGateway,
  ep: Endpoint,
  rolloutId: string | null,
  token: string | null,
  body?: unknown,
): Promise<ApiResult> {
  return call(agentUrl(gw, rolloutId, ep.path), {
    method: ep.method,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    body: ep.method === "POST" ? body : undefined,
  });
}

Deno.test("agent endpoints: malformed JSON and schema violations are 400s naming the field", async () => {
  await withControl({}, async ({ gw, check, victim, expected }) => {
    const r = await victim();
    for (const ep of ENDPOINTS.filter((e) => e.method === "POST")) {
      for (const raw of ['{"model": "m", "messages": [', "{'model': 'm'}", "not json"]) {
        assertError(await send(gw, ep, r.id, r.token, raw), 400, ep.shape, /malformed JSON/);
        await check(`${ep.name} malformed ${raw}`);
      }
      assertError(await send(gw, ep, r.id, r.token, ""), 400, ep.shape, /empty/);
      await check(`${ep.name} empty body`);
      for (const { body, field } of ep.invalid) {
        assertError(await send(gw, ep, r.id, r.token, body), 400, ep.shape, field);
        await check(`${ep.name} invalid ${JSON.stringify(body)}`);
      }
    }
    // Nothing was recorded for the victim, and it still takes a valid turn afterwards.
    assert.equal((await getRollout(gw, r.id)).turn_list.length, 0);
    const good = agentCall(gw, r, "messages", ENDPOINTS[0].good);
    const next = await gw.api("GET", `/requests/next?wait=5&rollout=${r.id}`);
    assert.equal(next.status, 200);
    const output_ids = await gw.gw.model.tokenizer.encode("still here<|im_end|>");
    const done = await gw.api("POST", `/requests/${next.json.request_id}/complete`, {
      output_ids,
      finish_reason: "stop",
    });
    assert.equal(done.status, 200);
    const answer = await good;
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.json.content, [{ type: "text", text: "still here" }]);
    expected.set(r.id, { total: 1, done: 1 });
  });
});

Deno.test("agent endpoints: unknown rollout 404, foreign token 403, no rollout and no token 401", async () => {
  await withControl({}, async ({ gw, control, check, victim, forget }) => {
    const r = await victim();
    for (const ep of ENDPOINTS) {
      const label = (what: string) => `${ep.name}: ${what}`;
      assertError(
        await send(gw, ep, "no-such-rollout", r.token, ep.good),
        404,
        ep.shape,
        /unknown rollout no-such-rollout/,
      );
      await check(label("unknown rollout"));
      // The control rollout's token must not open the victim (nor record in either).
      assertError(
        await send(gw, ep, r.id, control.token, ep.good),
        403,
        ep.shape,
        /another rollout/,
      );
      await check(label("foreign token"));
      // The victim's token must not open the control rollout.
      assertError(
        await send(gw, ep, control.id, r.token, ep.good),
        403,
        ep.shape,
        /another rollout/,
      );
      await check(label("foreign token on control"));
      assertError(await send(gw, ep, null, null, ep.good), 401, ep.shape, /no rollout/);
      await check(label("bare, no token"));
      assertError(await send(gw, ep, null, "rg_not-a-token", ep.good), 401, ep.shape, /no rollout/);
      await check(label("bare, unknown token"));
    }
    // A deleted rollout is unknown: its path is 404 and its token opens nothing any more.
    const gone = await victim();
    const del = await gw.api("DELETE", `/rollouts/${gone.id}`);
    assert.equal(del.status, 200);
    assert.deepEqual(del.json, { id: gone.id, deleted: true });
    forget(gone.id);
    for (const ep of ENDPOINTS) {
      assertError(
        await send(gw, ep, gone.id, gone.token, ep.good),
        404,
        ep.shape,
        /unknown rollout/,
      );
      assertError(await send(gw, ep, null, gone.token, ep.good), 401, ep.shape);
      await check(`${ep.name}: deleted rollout`);
    }
  });
});

Deno.test("agent endpoints: a finished rollout takes no more turns (409)", async () => {
  await withControl({}, async ({ gw, check, victim, expected }) => {
    const r = await victim();
    // One real turn before the finish, answered by hand.
    const pending = agentCall(gw, r, "chat/completions", {
      model: "m",
      messages: [{ role: "user", content: "before" }],
    });
    const next = await gw.api("GET", `/requests/next?wait=5&rollout=${r.id}`);
    assert.equal(next.status, 200);
    const ids = await gw.gw.model.tokenizer.encode("done<|im_end|>");
    const done = await gw.api("POST", `/requests/${next.json.request_id}/complete`, {
      output_ids: ids,
      finish_reason: "stop",
    });
    assert.equal(done.status, 200);
    assert.equal((await pending).status, 200);
    const fin = await gw.api("POST", `/rollouts/${r.id}/finish`, { reward: 1 });
    assert.equal(fin.status, 200);
    expected.set(r.id, { total: 1, done: 1 });
    await check("after finish");
    for (const ep of ENDPOINTS.filter((e) => e.turn)) {
      for (const stream of [false, true]) {
        const res = await send(gw, ep, r.id, r.token, { ...ep.good, stream });
        assertError(res, 409, ep.shape, /finished/);
        await check(`${ep.name} stream=${stream} on a finished rollout`);
      }
    }
    // Retrying the recorded request is refused too: no replay after the finish.
    assertError(
      await agentCall(gw, r, "chat/completions", {
        model: "m",
        messages: [{ role: "user", content: "before" }],
      }),
      409,
      "openai",
      /finished/,
    );
    await check("replay on a finished rollout");
  });
});

Deno.test("body over the cap: 413 in the protocol's shape, declared or streamed", async () => {
  await withControl(
    { limits: { maxBodyBytes: 1024, maxTrainerBodyBytes: 1024 } },
    async ({ gw, check, victim }) => {
      const r = await victim();
      const big = "x".repeat(2000);
      const bodies: Record<string, unknown> = {
        messages: { model: "m", max_tokens: 5, messages: [{ role: "user", content: big }] },
        count_tokens: { model: "m", messages: [{ role: "user", content: big }] },
        "chat/completions": { model: "m", messages: [{ role: "user", content: big }] },
        responses: { model: "m", input: big },
        generateContent: { contents: [{ parts: [{ text: big }] }] },
        streamGenerateContent: { contents: [{ parts: [{ text: big }] }] },
        countTokens: { contents: [{ parts: [{ text: big }] }] },
      };
      for (const ep of ENDPOINTS.filter((e) => e.method === "POST")) {
        const text = JSON.stringify(bodies[ep.name]);
        assert.ok(text.length > 1024);
        // Declared length over the cap.
        assertError(await send(gw, ep, r.id, r.token, text), 413, ep.shape, /limit of 1024 bytes/);
        await check(`${ep.name} declared 413`);
        // No declared length (chunked): the cap applies while reading.
        const bytes = new TextEncoder().encode(text);
        const chunked = new ReadableStream<Uint8Array>({
          start(controller) {
            for (let at = 0; at < bytes.length; at += 512) {
              controller.enqueue(bytes.slice(at, at + 512));
            }
            controller.close();
          },
        });
        const res = await fetch(agentUrl(gw, r.id, ep.path), {
          method: "POST",
          headers: { authorization: `Bearer ${r.token}`, "content-type": "application/json" },
          body: chunked,
        });
        const json = await res.json();
        assertError({ status: res.status, json, headers: res.headers }, 413, ep.shape, /limit/);
        await check(`${ep.name} streamed 413`);
      }
      // The trainer API has its own cap (set to the same here).
      const create = await gw.api("POST", "/rollouts", { metadata: { blob: big } });
      assertError(create, 413, "trainer", /limit of 1024 bytes/);
      await check("trainer create 413");
      const complete = await gw.api("POST", "/requests/whatever/complete", {
        output_ids: Array.from({ length: 400 }, (_, i) => i),
        finish_reason: "stop",
      });
      assertError(complete, 413, "trainer", /limit/);
      await check("trainer complete 413");
    },
  );
});

Deno.test("trainer endpoints: malformed, invalid, unknown and conflicting requests", async () => {
  await withControl({}, async ({ gw, check, victim, expected }) => {
    const r = await victim({ id: "victim" });
    const cases: [string, string, unknown, number, RegExp][] = [
      ["POST", "/rollouts", "{", 400, /malformed JSON/],
      ["POST", "/rollouts", [], 400, /invalid rollout/],
      ["POST", "/rollouts", { id: "bad id!" }, 400, /^invalid rollout: id: /],
      ["POST", "/rollouts", { id: "" }, 400, /^invalid rollout: id: /],
      ["POST", "/rollouts", { sampling: { temperature: -1 } }, 400, /sampling\.temperature: /],
      ["POST", "/rollouts", { sampling: { top_p: 0 } }, 400, /sampling\.top_p: /],
      ["POST", "/rollouts", { sampling: { max_tokens: 0 } }, 400, /sampling\.max_tokens: /],
      ["POST", "/rollouts", { metadata: "x" }, 400, /metadata: /],
      ["POST", "/rollouts", { backend: "nope" }, 400, /backend/],
      ["POST", "/rollouts", { id: "victim" }, 409, /already exists/],
      ["POST", "/rollouts", { id: "control" }, 409, /already exists/],
      ["GET", "/rollouts/nope", undefined, 404, /unknown rollout nope/],
      ["DELETE", "/rollouts/nope", undefined, 404, /unknown rollout nope/],
      ["POST", "/rollouts/nope/finish", { reward: 1 }, 404, /unknown rollout nope/],
      ["GET", "/rollouts/nope/samples", undefined, 404, /unknown rollout nope/],
      ["POST", "/rollouts/victim/finish", "{reward", 400, /malformed JSON/],
      ["POST", "/rollouts/victim/finish", { reward: "high" }, 400, /reward: /],
      ["GET", "/requests/next?wait=-1", undefined, 400, /wait/],
      ["GET", "/requests/next?wait=abc", undefined, 400, /wait/],
      ["GET", "/requests/next?wait=0&rollout=nope", undefined, 404, /unknown rollout nope/],
      ["POST", "/requests/nope/complete", "{", 400, /malformed JSON/],
      [
        "POST",
        "/requests/nope/complete",
        { output_ids: [1], finish_reason: "stop" },
        404,
        /unknown request id nope/,
      ],
      ["POST", "/requests/nope/fail", { error: "x" }, 404, /unknown request id nope/],
      ["POST", "/requests/nope/fail", { error: "" }, 400, /^invalid failure: error: /],
      ["POST", "/requests/nope/fail", { error: "x", status: 200 }, 400, /status: /],
      ["POST", "/requests/nope/fail", "nope", 400, /malformed JSON/],
    ];
    for (const [method, path, body, status, message] of cases) {
      assertError(await gw.api(method, path, body), status, "trainer", message);
      await check(`${method} ${path} ${JSON.stringify(body)}`);
    }
    // The victim is still active and unfinished after the bad finish requests.
    const state = await getRollout(gw, r.id);
    assert.equal(state.status, "active");
    assert.equal(state.reward, null);
    expected.set(r.id, {});
  });
});

Deno.test("completions: invalid bodies are refused and the request stays answerable", async () => {
  await withControl({}, async ({ gw, check, victim, expected }) => {
    const r = await victim();
    const vocab = gw.gw.model.vocabSize;
    const agent = agentCall(gw, r, "chat/completions", {
      model: "m",
      messages: [{ role: "user", content: "count to three" }],
    });
    const next = await gw.api("GET", `/requests/next?wait=5&rollout=${r.id}`);
    assert.equal(next.status, 200);
    const rid = next.json.request_id;
    expected.set(r.id, { total: 1, pending: 1 });
    const ids = await gw.gw.model.tokenizer.encode("one two three<|im_end|>");
    const good = { output_ids: ids, logprobs: ids.map(() => -0.5), finish_reason: "stop" };
    const invalid: [unknown, RegExp][] = [
      [{ ...good, output_ids: [...ids.slice(0, -1), -1] }, /output_ids\[\d+\]: /],
      [{ ...good, output_ids: [1.5, ...ids.slice(1)] }, /output_ids\[0\]: /],
      [{ ...good, output_ids: [vocab, ...ids.slice(1)] }, new RegExp(`token id ${vocab} .*vocab`)],
      [{ ...good, output_ids: [...ids.slice(1), 10 ** 9] }, /outside the vocabulary/],
      [{ ...good, logprobs: [-0.5] }, /^invalid completion: logprobs: /],
      [{ ...good, logprobs: [...good.logprobs, -1] }, /^invalid completion: logprobs: /],
      [{ ...good, finish_reason: "eos" }, /^invalid completion: finish_reason: /],
      [{ output_ids: ids }, /finish_reason: /],
      [{ finish_reason: "stop" }, /output_ids: /],
      // Regression: an empty output was accepted (an empty, untrained turn for the agent).
      [{ ...good, output_ids: [], logprobs: [] }, /output_ids: must hold at least one id/],
      [{ ...good, output_ids: "1 2 3" }, /output_ids: /],
      ["{oops", /malformed JSON/],
    ];
    for (const [body, message] of invalid) {
      assertError(await gw.api("POST", `/requests/${rid}/complete`, body), 400, "trainer", message);
      await check(`complete ${JSON.stringify(body)}`);
    }
    // The request is still pending (refused bodies changed nothing) and is still claimed.
    assert.equal(gw.gw.gate.pendingCount(r.id), 1);
    const ok = await gw.api("POST", `/requests/${rid}/complete`, good);
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.json, { request_id: rid, completed: true });
    const answer = await agent;
    assert.equal(answer.status, 200);
    assert.equal(answer.json.choices[0].message.content, "one two three");
    assert.equal(answer.json.usage.completion_tokens, ids.length);
    // Double completion and a late failure are conflicts; the answer is not replaced.
    assertError(
      await gw.api("POST", `/requests/${rid}/complete`, { output_ids: [1], finish_reason: "stop" }),
      409,
      "trainer",
      /already resolved/,
    );
    assertError(
      await gw.api("POST", `/requests/${rid}/fail`, { error: "late" }),
      409,
      "trainer",
      /already resolved/,
    );
    expected.set(r.id, { total: 1, done: 1 });
    await check("after double completion");
    const [turn] = (await getRollout(gw, r.id)).turn_list;
    assert.equal(turn.output_length, ids.length);
    assert.equal(turn.status, "done");
    const samples = await gw.api("GET", `/rollouts/${r.id}/samples`);
    assert.deepEqual(samples.json.samples[0].input_ids.slice(-ids.length), ids);
    assert.deepEqual(samples.json.samples[0].logprobs.slice(-ids.length), good.logprobs);
  });
});

/** How the agent sees a trainer `fail`, per protocol. */
const FAIL_CASES = [
  {
    ep: ENDPOINTS[0],
    body: { model: "m", max_tokens: 64, messages: [{ role: "user", content: "fail me" }] },
  },
  { ep: ENDPOINTS[2], body: { model: "m", messages: [{ role: "user", content: "fail me" }] } },
  { ep: ENDPOINTS[3], body: { model: "m", input: "fail me" } },
  // Gemini streams by path, not by a body field.
  {
    ep: ENDPOINTS[5],
    streamEp: ENDPOINTS[6],
    body: { contents: [{ role: "user", parts: [{ text: "fail me" }] }] },
  },
];

/** Asserts the in-stream error event of a protocol and returns its message. */
function streamError(name: string, raw: string, status: number): string {
  if (name === "streamGenerateContent") {
    // Google's SDKs throw on a bare error object; no SSE comment may come before it.
    assert.ok(!raw.startsWith(":"), raw);
    const last = JSON.parse(raw.trim().split("\n\n").at(-1)!);
    assert.equal(last.error.code, status);
    assert.equal(last.error.status, GOOGLE_STATUSES[status]);
    return last.error.message;
  }
  const { events } = parseSse(raw);
  assert.ok(events.length > 0, raw);
  switch (name) {
    case "messages": {
      const last = events.at(-1)!;
      assert.equal(last.event, "error");
      assert.equal(last.json.type, "error");
      assert.equal(last.json.error.type, ANTHROPIC_TYPES[status]);
      return last.json.error.message;
    }
    case "chat/completions": {
      assert.equal(events.at(-1)!.data, "[DONE]");
      const err = events.at(-2)!;
      assert.equal(err.json.error.type, OPENAI_TYPES[status]);
      return err.json.error.message;
    }
    case "responses": {
      const last = events.at(-1)!;
      assert.equal(last.event, "response.failed");
      assert.equal(last.json.type, "response.failed");
      assert.equal(last.json.response.status, "failed");
      assert.equal(
        last.json.response.error.code,
        status >= 500 ? "server_error" : "invalid_request",
      );
      return last.json.response.error.message;
    }
  }
  throw new Error(name);
}

Deno.test("trainer fail: the agent gets a protocol-shaped error, as a body or in the stream", async () => {
  await withControl({}, async ({ gw, check, victim, expected }) => {
    const r = await victim();
    let failed = 0;
    for (const { ep: plain, streamEp, body } of FAIL_CASES) {
      for (const stream of [false, true]) {
        const ep = stream && streamEp ? streamEp : plain;
        for (const status of [503, undefined]) {
          const res = fetch(agentUrl(gw, r.id, ep.path), {
            method: "POST",
            headers: { authorization: `Bearer ${r.token}`, "content-type": "application/json" },
            body: JSON.stringify({ ...body, stream }),
          });
          const next = await gw.api("GET", `/requests/next?wait=5&rollout=${r.id}`);
          assert.equal(next.status, 200);
          const message = `engine exploded ${failed}`;
          const fail = await gw.api("POST", `/requests/${next.json.request_id}/fail`, {
            error: message,
            ...(status ? { status } : {}),
          });
          assert.equal(fail.status, 200);
          assert.deepEqual(fail.json, { request_id: next.json.request_id, failed: true });
          failed++;
          const response = await res;
          const want = status ?? 502;
          const label = `${ep.name} stream=${stream} status=${status}`;
          if (stream) {
            assert.equal(response.status, 200, label);
            assert.match(response.headers.get("content-type")!, /text\/event-stream/);
            assert.equal(streamError(ep.name, await response.text(), want), message, label);
          } else {
            const json = await response.json();
            assertError(
              { status: response.status, json, headers: response.headers },
              want,
              ep.shape,
            );
            assert.equal(json.error.message, message, label);
          }
          expected.set(r.id, { total: failed, failed });
          await check(label);
        }
      }
    }
    const turns = (await getRollout(gw, r.id)).turn_list;
    assert.ok(
      turns.every((t: { status: string; error: string }) =>
        t.status === "failed" && /^engine exploded \d+$/.test(t.error)
      ),
    );
    // A failed turn is not replayed: the same request again is a new, answerable turn.
    const retry = agentCall(gw, r, "chat/completions", FAIL_CASES[1].body);
    const next = await gw.api("GET", `/requests/next?wait=5&rollout=${r.id}`);
    assert.equal(next.status, 200);
    const ids = await gw.gw.model.tokenizer.encode("recovered<|im_end|>");
    assert.equal(
      (await gw.api("POST", `/requests/${next.json.request_id}/complete`, {
        output_ids: ids,
        finish_reason: "stop",
      })).status,
      200,
    );
    const ok = await retry;
    assert.equal(ok.status, 200);
    assert.equal(ok.json.choices[0].message.content, "recovered");
    expected.set(r.id, { total: failed + 1, failed, done: 1 });
  });
});

// (A known agent path with another method is a 405 in its protocol: the issue 21 test below.)
Deno.test("unknown routes are 404 JSON", async () => {
  await withControl({}, async ({ gw, control, check }) => {
    const routes: [string, string][] = [
      ["GET", "/nope"],
      ["GET", "/v1/nope"],
      ["POST", "/v2/messages"],
      ["POST", `/rollout/${control.id}/v1/embeddings`],
      ["POST", `/rollout/${control.id}/v1beta/models/m:embedContent`],
      ["PUT", "/api/rollouts"],
      ["GET", "/api/nope"],
    ];
    for (const [method, path] of routes) {
      const r = await call(gw.url + path, { method, body: method === "GET" ? undefined : {} });
      assertError(r, 404, "trainer", new RegExp(`no route for ${method} ${path}$`));
      await check(`${method} ${path}`);
    }
  });
});

Deno.test("adminToken: the trainer API and agents need their tokens", async () => {
  const admin = "admin-secret";
  await withControl({ adminToken: admin }, async ({ gw, control, check, victim }) => {
    const r = await victim();
    const unauth = (headers: Record<string, string>) =>
      call(`${gw.url}/api/rollouts`, { method: "POST", headers, body: {} });
    const attempts: Record<string, string>[] = [
      {},
      { authorization: "Bearer wrong" },
      { authorization: `Bearer ${r.token}` },
      { "x-api-key": control.token },
    ];
    for (const headers of attempts) {
      assertError(await unauth(headers), 401, "trainer", /admin token/);
      await check(`trainer with ${JSON.stringify(headers)}`);
    }
    assertError(await call(`${gw.url}/api/rollouts`), 401, "trainer");
    assertError(await call(`${gw.url}/api/requests/next?wait=0`), 401, "trainer");
    const ok = await call(`${gw.url}/api/rollouts`, {
      headers: { authorization: `Bearer ${admin}` },
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.json.rollouts.length, 2);
    const viaKey = await call(`${gw.url}/api/rollouts/${r.id}`, {
      headers: { "x-api-key": admin },
    });
    assert.equal(viaKey.status, 200);
    assert.equal(viaKey.json.id, r.id);
    const health = await call(`${gw.url}/health`);
    assert.equal(health.status, 200);

    for (const ep of ENDPOINTS) {
      // No token, or a token that is nobody's: 401 in the protocol's shape.
      assertError(await send(gw, ep, r.id, null, ep.good), 401, ep.shape, /requires its token/);
      assertError(await send(gw, ep, r.id, "wrong", ep.good), 401, ep.shape, /requires its token/);
      await check(`${ep.name} without token`);
    }
    // With the rollout's token (bearer or x-api-key), agent requests work.
    const models = await send(gw, ENDPOINTS[4], r.id, r.token);
    assert.equal(models.status, 200);
    assert.equal(models.json.data[0].id, "rollgate-policy");
    // The admin token opens any rollout's agent endpoints too (operators, debugging).
    assert.equal((await send(gw, ENDPOINTS[4], r.id, admin)).status, 200);
    const counted = await call(agentUrl(gw, r.id, "v1/messages/count_tokens"), {
      method: "POST",
      headers: { "x-api-key": r.token },
      body: ENDPOINTS[1].good,
    });
    assert.equal(counted.status, 200);
    assert.ok(counted.json.input_tokens > 0);
    // Gemini's credentials: the `x-goog-api-key` header, or `?key=` (bare: rollout from it).
    const geminiCount = ENDPOINTS.find((e) => e.name === "countTokens")!;
    const byHeader = await call(agentUrl(gw, r.id, geminiCount.path), {
      method: "POST",
      headers: { "x-goog-api-key": r.token },
      body: geminiCount.good,
    });
    assert.equal(byHeader.status, 200, JSON.stringify(byHeader.json));
    assert.ok(byHeader.json.totalTokens > 0);
    const byQuery = await call(`${agentUrl(gw, null, geminiCount.path)}?key=${r.token}`, {
      method: "POST",
      body: geminiCount.good,
    });
    assert.deepEqual(byQuery.json, byHeader.json);
    // `check` itself drives the control rollout with its token under the admin-token gateway.
    await check("agent with token");
  });
});

Deno.test("bad input (issue 21): rollout ids . and .., positive logprobs, ids after a stop id, wrong methods", async () => {
  const gw = await startGateway();
  try {
    for (const id of [".", ".."]) {
      const r = await gw.api("POST", "/rollouts", { id });
      assert.equal(r.status, 400, id);
      assert.match(r.json.error.message, /may not be \. or \.\./);
    }

    const r = await gw.rollout();
    const waiting = agentCall(gw, r, "chat/completions", {
      model: "m",
      messages: [{ role: "user", content: "hi" }],
    });
    const pending = await take(gw, r.id);
    const rid = pending.request_id;
    const complete = (body: unknown) => gw.api("POST", `/requests/${rid}/complete`, body);
    const positive = await complete({
      output_ids: [9707, 151645],
      logprobs: [-0.5, 0.25],
      finish_reason: "stop",
    });
    assert.equal(positive.status, 400);
    assert.match(positive.json.error.message, /logprobs.*at most 0/);
    const afterStop = await complete({ output_ids: [9707, 151645, 9707], finish_reason: "stop" });
    assert.equal(afterStop.status, 400);
    assert.match(afterStop.json.error.message, /1 id\(s\) after the stop id 151645 at position 1/);
    // Refused completions changed nothing: the right one still lands, once.
    const ok = await complete({ output_ids: [9707, 151645], finish_reason: "stop" });
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    assert.equal((await waiting).status, 200);

    const wrong: [string, string, Shape][] = [
      ["GET", `/rollout/${r.id}/v1/messages`, "anthropic"],
      ["PUT", "/v1/messages", "anthropic"],
      ["GET", `/rollout/${r.id}/v1/messages/count_tokens`, "anthropic"],
      ["DELETE", "/v1/chat/completions", "openai"],
      ["GET", `/rollout/${r.id}/v1/responses`, "openai"],
      ["POST", "/v1/models", "openai"],
      ["GET", `/rollout/${r.id}/v1beta/models/m:generateContent`, "google"],
      ["PUT", "/v1beta/models/m:streamGenerateContent", "google"],
      ["GET", "/v1beta/models/m:countTokens", "google"],
    ];
    for (const [method, path, shape] of wrong) {
      const res = await call(gw.url + path, { method });
      assert.equal(res.status, 405, `${method} ${path}`);
      assert.match(res.json.error.message, new RegExp(`takes (POST|GET), not ${method}`));
      if (shape === "anthropic") {
        assert.equal(res.json.type, "error");
        assert.equal(res.json.error.type, "invalid_request_error");
      }
      if (shape === "google") assert.equal(res.json.error.status, "INVALID_ARGUMENT");
      assert.ok(res.headers.get("allow"), "Allow names the method");
    }
  } finally {
    await gw.close();
  }
});

/**
 * A POST exactly as `curl -X POST URL` sends it: no body and no `content-length` (nor
 * `transfer-encoding`), over a raw socket, since `fetch` always declares a length.
 */
async function bareRequest(url: string, method: string, path: string): Promise<ApiResult> {
  const { hostname, port } = new URL(url);
  const conn = await Deno.connect({ hostname, port: Number(port) });
  try {
    const head = `${method} ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\n` +
      "content-type: application/json\r\nconnection: close\r\n\r\n";
    await conn.write(new TextEncoder().encode(head));
    const raw = new TextDecoder().decode(await new Response(conn.readable).arrayBuffer());
    const [status] = raw.match(/^HTTP\/1\.1 (\d+)/)!.slice(1).map(Number);
    let text = raw.slice(raw.indexOf("\r\n\r\n") + 4);
    if (/transfer-encoding: chunked/i.test(raw.slice(0, raw.indexOf("\r\n\r\n")))) {
      let body = "";
      for (;;) {
        const eol = text.indexOf("\r\n");
        const size = parseInt(text.slice(0, eol), 16);
        if (!size) break;
        body += text.slice(eol + 2, eol + 2 + size);
        text = text.slice(eol + 4 + size);
      }
      text = body;
    }
    return { status, json: JSON.parse(text), headers: new Headers() };
  } finally {
    try {
      conn.close();
    } catch { /* closed by the server */ }
  }
}

Deno.test("trainer bodies: unknown fields are a 400 naming them and the known ones", async () => {
  await withControl({}, async ({ gw, check, victim, expected }) => {
    const r = await victim();
    const known = "known: id, metadata, sampling, labels, reward_mode, sft, backend";
    const cases: [string, unknown, RegExp][] = [
      [
        "/rollouts",
        { idd: "x" },
        new RegExp(`^invalid rollout: body: unknown field idd \\(${known}`),
      ],
      ["/rollouts", { samplng: { max_tokens: 5 } }, /body: unknown field samplng \(known: id, /],
      ["/rollouts", { idd: "x", grup: "g" }, /body: unknown fields idd, grup \(known: /],
      [
        "/rollouts",
        { sampling: { max_token: 5 } },
        /sampling: unknown field max_token \(known: max_tokens, temperature, top_p, top_k\)/,
      ],
      ["/rollouts", { sft: { weight: 1, tool: ["x"] } }, /sft: unknown field tool \(known: weight/],
      [`/rollouts/${r.id}/finish`, { rewards: 1 }, /unknown field rewards \(known: reward, /],
      [
        "/requests/nope/ack",
        { leese: 5 },
        /^invalid ack: body: unknown field leese \(known: lease, weight_version\)/,
      ],
      [
        "/requests/nope/renew",
        { lease: 5, x: 1 },
        /unknown field x \(known: lease, weight_version\)/,
      ],
      ["/requests/nope/fail", { error: "x", code: 500 }, /unknown field code \(known: error, st/],
      [
        "/requests/nope/complete",
        { output_ids: [1], finish_reason: "stop", logprob: [-1] },
        /unknown field logprob \(known: output_ids, logprobs, finish_reason/,
      ],
      ["/requests/nope/append", { ids: [1] }, /unknown field ids \(known: output_ids, weight_/],
    ];
    for (const [path, body, message] of cases) {
      assertError(await gw.api("POST", path, body), 400, "trainer", message);
      await check(`POST ${path} ${JSON.stringify(body)}`);
    }
    // Refused before anything changed: the rollout is still active, with no reward.
    assert.equal((await getRollout(gw, r.id)).status, "active");
    expected.set(r.id, {});
  });
});

Deno.test("trainer bodies: no body at all (curl -X POST) is {}: ack and renew take the default lease", async () => {
  const gw = await startGateway();
  try {
    const created = await bareRequest(gw.url, "POST", "/api/rollouts");
    assert.equal(created.status, 201, JSON.stringify(created.json));
    const r = created.json as RolloutHandle;
    const waiting = agentCall(gw, r, "chat/completions", {
      model: "m",
      messages: [{ role: "user", content: "hi" }],
    });
    const rid = (await take(gw, r.id)).request_id;
    for (const verb of ["ack", "renew"]) {
      const res = await bareRequest(gw.url, "POST", `/api/requests/${rid}/${verb}`);
      assert.equal(res.status, 200, `${verb}: ${JSON.stringify(res.json)}`);
      assert.equal(res.json.request_id, rid);
      assert.equal(res.json.lease_s, 60, "the default lease");
    }
    // A body-less completion names what is missing.
    const complete = await bareRequest(gw.url, "POST", `/api/requests/${rid}/complete`);
    assert.equal(complete.status, 400);
    assert.match(complete.json.error.message, /^invalid completion: output_ids: /);
    const ok = await gw.api("POST", `/requests/${rid}/complete`, {
      output_ids: [9707, 151645],
      finish_reason: "stop",
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    assert.equal((await waiting).json.choices[0].message.content, "Hello");
    const finished = await bareRequest(gw.url, "POST", `/api/rollouts/${r.id}/finish`);
    assert.equal(finished.status, 200, JSON.stringify(finished.json));
    assert.equal(finished.json.reward, null);
  } finally {
    await gw.close();
  }
});
