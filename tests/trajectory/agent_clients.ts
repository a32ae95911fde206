/**
 * Plumbing for the trajectory-tree tests: an in-process gateway on a real loopback socket, a
 * queue of policy replies served by the scripted policy (TEST DOUBLE playing the trainer), and
 * agent clients for the three wire protocols that rebuild the assistant message from the SSE
 * stream and echo it back the way the recorded CLIs do.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createGateway, type Gateway, type GatewayOptions } from "../../gateway/mod.ts";
import { parseSseText } from "../../generation/mod.ts";
import type { PolicyModel } from "../../model/mod.ts";
import type { Sample, SharedPrefixTree, TurnTreeExport } from "../../trajectory/mod.ts";
import { answerText, ScriptedPolicy, sharedModel } from "../support/scripted_policy.ts";

// deno-lint-ignore no-explicit-any
export type Json = any;

export interface RolloutHandle {
  id: string;
  token: string;
  base_url: string;
}

export interface ApiResult {
  status: number;
  json: Json;
}

/** What `GET /api/rollouts/:id/tree` answers. */
export type TreeResponse = TurnTreeExport & { shared_prefix: SharedPrefixTree };

/**
 * Replies the scripted policy gives, in order: the agents in these tests send one request at a
 * time, so the n-th request that reaches the trainer gets the n-th reply. A request nobody
 * planned for (e.g. a retry that should have been replayed) is counted in `unexpected`.
 */
export class Replies {
  readonly queue: string[] = [];
  readonly prompts: string[] = [];
  unexpected = 0;

  push(...texts: string[]): this {
    this.queue.push(...texts);
    return this;
  }

  readonly script = ({ text }: { text: string }): string => {
    this.prompts.push(text);
    const next = this.queue.shift();
    if (next !== undefined) return next;
    this.unexpected++;
    return answerText("nothing planned", "unplanned request");
  };
}

export interface TestGateway {
  url: string;
  gw: Gateway;
  model: PolicyModel;
  replies: Replies;
  policy: ScriptedPolicy;
  api(method: string, path: string, body?: unknown): Promise<ApiResult>;
  rollout(spec?: Record<string, unknown>): Promise<RolloutHandle>;
  tree(id: string): Promise<TreeResponse>;
  samples(id: string): Promise<Sample[]>;
  finish(id: string, reward?: number | null): Promise<Sample[]>;
  close(): Promise<void>;
}

/** A gateway served by `Deno.serve` on a free loopback port, with the scripted policy running. */
export async function startGateway(options: Partial<GatewayOptions> = {}): Promise<TestGateway> {
  const model = await sharedModel();
  const gw = createGateway({ keepAliveMs: 200, ...options, model });
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, gw.app.fetch);
  const url = `http://127.0.0.1:${server.addr.port}`;
  const replies = new Replies();
  const policy = new ScriptedPolicy(url, replies.script).start();
  const api = (method: string, path: string, body?: unknown) =>
    call(`${url}/api${path}`, { method, body });
  const ok = async (method: string, path: string, body?: unknown) => {
    const r = await api(method, path, body);
    assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${JSON.stringify(r.json)}`);
    return r.json;
  };
  return {
    url,
    gw,
    model,
    replies,
    policy,
    api,
    async rollout(spec = {}) {
      const r = await api("POST", "/rollouts", spec);
      assert.equal(r.status, 201, JSON.stringify(r.json));
      return r.json;
    },
    tree: (id) => ok("GET", `/rollouts/${id}/tree`),
    samples: async (id) => (await ok("GET", `/rollouts/${id}/samples`)).samples,
    finish: async (id, reward = 1) =>
      (await ok("POST", `/rollouts/${id}/finish`, { reward })).samples,
    async close() {
      await policy.stop();
      gw.rollouts.abandon("test gateway closing");
      await server.shutdown();
    },
  };
}

/**
 * Runs `fn` against a fresh gateway; afterwards every planned reply must have been used and no
 * unplanned request may have reached the trainer.
 */
export async function withGateway(
  fn: (t: TestGateway) => Promise<void>,
  options: Partial<GatewayOptions> = {},
): Promise<void> {
  const t = await startGateway(options);
  try {
    await fn(t);
    assert.equal(t.replies.unexpected, 0, "a request reached the trainer that nobody planned");
    assert.deepEqual(t.replies.queue, [], "planned replies were not used");
  } finally {
    await t.close();
  }
}

/** How long one HTTP call of a test may take, headers and body: a hang fails the test. */
const CALL_DEADLINE_MS = 120_000;

/** One HTTP call whose body is always consumed; `body` is JSON-encoded. */
export async function call(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown } = {},
): Promise<ApiResult> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.body !== undefined) headers["content-type"] ??= "application/json";
  const res = await fetch(url, {
    method: init.method ?? "GET",
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(CALL_DEADLINE_MS),
  });
  const text = await res.text();
  let json: Json = text;
  try {
    json = JSON.parse(text);
  } catch { /* SSE or empty */ }
  return { status: res.status, json };
}

/** Server-sent events of a raw body: `{event, data}` with `data` parsed when it is JSON. */
export function parseSse(raw: string): { event?: string; data: Json }[] {
  return parseSseText(raw).events.map(({ event, data }) => {
    let parsed: Json = data;
    try {
      parsed = JSON.parse(data);
    } catch { /* [DONE] */ }
    return event === undefined ? { data: parsed } : { event, data: parsed };
  });
}

async function post(url: string, headers: Record<string, string>, body: unknown) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(CALL_DEADLINE_MS),
  });
  const text = await res.text();
  assert.equal(res.status, 200, `${url}: ${res.status} ${text}`);
  return { text, contentType: res.headers.get("content-type") ?? "" };
}

// ---------------------------------------------------------------------------------------------
// Recorded traffic

const ROOT = new URL("../../", import.meta.url);

function records(path: string): Json[] {
  return Deno.readTextFileSync(new URL(path, ROOT)).split("\n").filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));
}

/** The request records of a capture, parsed fresh (tests may mutate them). */
export const fixtures = {
  claudeCode: () => records("gateway/agent/anthropic/__fixtures__/claude-code-2.1.330.jsonl"),
  pi: () => records("gateway/agent/openai_chat/__fixtures__/pi-0.73.1.jsonl"),
  codex: () => records("gateway/agent/responses/__fixtures__/codex-0.169.0.jsonl"),
  /** Claude Code sending a recorded `\uXXXX` tool input back decoded (`capture_claude_code.ts`). */
  claudeCodeUnicodeEscape: () =>
    records("tests/trajectory/__fixtures__/claude-code-2.1.330-unicode-escape.jsonl"),
};

// ---------------------------------------------------------------------------------------------
// Anthropic (Claude Code)

/** The assistant blocks rebuilt from a stream, as Claude Code holds them. */
export type AnthropicBlock =
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

export interface AnthropicAnswer {
  content: AnthropicBlock[];
  stop_reason: string;
  usage: { input_tokens: number; output_tokens: number };
}

/** Claude Code's headers (minus the recorded session ids). */
function claudeHeaders(r: RolloutHandle): Record<string, string> {
  return {
    authorization: `Bearer ${r.token}`,
    "anthropic-version": "2023-06-01",
    "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14",
    "x-app": "cli",
    "user-agent": "claude-cli/2.1.330 (external, sdk-cli)",
    "x-stainless-retry-count": "0",
  };
}

/** One `/v1/messages?beta=true` call, streamed or not, rebuilt into the assistant blocks. */
export async function anthropicTurn(
  t: TestGateway,
  r: RolloutHandle,
  body: Json,
  headers: Record<string, string> = {},
): Promise<AnthropicAnswer> {
  const { text } = await post(
    `${t.url}/rollout/${r.id}/v1/messages?beta=true`,
    { ...claudeHeaders(r), ...headers },
    body,
  );
  return body.stream ? readAnthropicStream(text) : JSON.parse(text);
}

/** The assistant blocks of a streamed Messages answer, rebuilt as an SDK accumulates them. */
export function readAnthropicStream(text: string): AnthropicAnswer {
  const blocks: Json[] = [];
  const partial: string[] = [];
  let stop_reason = "", usage: Json = {};
  for (const { event, data } of parseSse(text)) {
    if (event === "error") throw new Error(`stream error: ${JSON.stringify(data)}`);
    if (event === "message_start") usage = { ...data.message.usage };
    if (event === "content_block_start") {
      blocks[data.index] = structuredClone(data.content_block);
      partial[data.index] = "";
    }
    if (event === "content_block_delta") {
      const b = blocks[data.index], d = data.delta;
      if (d.type === "thinking_delta") b.thinking += d.thinking;
      if (d.type === "signature_delta") b.signature = d.signature;
      if (d.type === "text_delta") b.text += d.text;
      if (d.type === "input_json_delta") partial[data.index] += d.partial_json;
    }
    if (event === "content_block_stop" && blocks[data.index].type === "tool_use") {
      blocks[data.index].input = JSON.parse(partial[data.index] || "{}");
    }
    if (event === "message_delta") {
      stop_reason = data.delta.stop_reason;
      usage.output_tokens = data.usage.output_tokens;
    }
  }
  return { content: blocks, stop_reason, usage };
}

/** Claude Code moves `cache_control` to the last block of the last message on every request. */
export function moveCacheControl(messages: Json[]): Json[] {
  const out = structuredClone(messages);
  for (const m of out) {
    if (Array.isArray(m.content)) { for (const b of m.content) delete b.cache_control; }
  }
  const last = out.at(-1);
  if (last && typeof last.content === "string") {
    last.content = [{ type: "text", text: last.content }];
  }
  if (last) last.content.at(-1).cache_control = { type: "ephemeral" };
  return out;
}

/** The next Claude Code body: history + the echoed answer + a user message of tool results. */
export function claudeNext(
  body: Json,
  answer: AnthropicAnswer,
  results: { tool_use_id: string; content: Json; is_error?: boolean }[],
): Json {
  const messages = [
    ...body.messages,
    { role: "assistant", content: answer.content },
    {
      role: "user",
      content: results.map((x) => ({
        tool_use_id: x.tool_use_id,
        type: "tool_result",
        content: x.content,
        is_error: x.is_error ?? false,
      })),
    },
  ];
  return { ...body, messages: moveCacheControl(messages) };
}

export function toolUses(a: AnthropicAnswer) {
  return a.content.filter((b) => b.type === "tool_use") as Extract<
    AnthropicBlock,
    { type: "tool_use" }
  >[];
}

// ---------------------------------------------------------------------------------------------
// OpenAI Chat (pi)

export interface ChatAnswer {
  content: string;
  reasoning_content: string;
  tool_calls: { id: string; type: "function"; function: { name: string; arguments: string } }[];
  finish_reason: string;
}

/** Rebuilds a streamed chat completion the way the OpenAI SDK accumulates deltas. */
export function accumulateChat(chunks: Json[]): ChatAnswer {
  const out: ChatAnswer = { content: "", reasoning_content: "", tool_calls: [], finish_reason: "" };
  for (const c of chunks) {
    const choice = c.choices?.[0];
    if (!choice) continue;
    const d = choice.delta ?? {};
    if (d.content) out.content += d.content;
    if (d.reasoning_content) out.reasoning_content += d.reasoning_content;
    for (const tc of d.tool_calls ?? []) {
      out.tool_calls[tc.index] ??= {
        id: "",
        type: "function",
        function: { name: "", arguments: "" },
      };
      const slot = out.tool_calls[tc.index];
      if (tc.id) slot.id = tc.id;
      if (tc.function?.name) slot.function.name += tc.function.name;
      if (tc.function?.arguments) slot.function.arguments += tc.function.arguments;
    }
    if (choice.finish_reason) out.finish_reason = choice.finish_reason;
  }
  return out;
}

/** One streamed `/v1/chat/completions` call with pi's headers. */
export async function chatTurn(t: TestGateway, r: RolloutHandle, body: Json): Promise<ChatAnswer> {
  const { text } = await post(`${t.url}/rollout/${r.id}/v1/chat/completions`, {
    authorization: `Bearer ${r.token}`,
    "user-agent": "OpenAI/JS 6.26.0",
    "x-stainless-retry-count": "0",
  }, body);
  if (!body.stream) {
    const m = JSON.parse(text).choices[0];
    return {
      content: m.message.content ?? "",
      reasoning_content: m.message.reasoning_content ?? "",
      tool_calls: m.message.tool_calls ?? [],
      finish_reason: m.finish_reason,
    };
  }
  return accumulateChat(parseSse(text).map((e) => e.data).filter((d) => typeof d === "object"));
}

/**
 * pi's echo of an answer: `{role, content, reasoning_content, tool_calls}` with the arguments
 * re-serialised (`JSON.stringify(JSON.parse(args))`), as pi 0.73.1 sends them back.
 */
export function piEcho(a: ChatAnswer): Json {
  return {
    role: "assistant",
    content: a.content,
    reasoning_content: a.reasoning_content,
    ...(a.tool_calls.length
      ? {
        tool_calls: a.tool_calls.map((c) => ({
          id: c.id,
          type: "function",
          function: {
            name: c.function.name,
            arguments: JSON.stringify(JSON.parse(c.function.arguments)),
          },
        })),
      }
      : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// OpenAI Responses (Codex)

/** One streamed `/v1/responses` call; the output items of `response.completed`. */
export async function responsesTurn(t: TestGateway, r: RolloutHandle, body: Json): Promise<Json[]> {
  const { text } = await post(`${t.url}/rollout/${r.id}/v1/responses`, {
    authorization: `Bearer ${r.token}`,
    originator: "codex_exec",
  }, body);
  const done = parseSse(text).find((e) => e.event === "response.completed");
  assert.ok(done, `no response.completed in ${text.slice(0, 500)}`);
  return done.data.response.output;
}

/**
 * Codex's echo of output items: keys in its own order, `content: null` added to reasoning items,
 * `status` first on messages and calls (see the second record of the Codex capture).
 */
export function codexEcho(items: Json[]): Json[] {
  return items.map((item) => {
    switch (item.type) {
      case "reasoning":
        return {
          type: "reasoning",
          id: item.id,
          summary: item.summary,
          content: null,
          encrypted_content: item.encrypted_content,
        };
      case "message":
        return {
          type: "message",
          status: item.status,
          id: item.id,
          role: item.role,
          content: item.content,
        };
      case "function_call":
        return {
          type: "function_call",
          status: item.status,
          id: item.id,
          name: item.name,
          arguments: item.arguments,
          call_id: item.call_id,
        };
      default:
        return item;
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Checks on samples

/** `[start, end)` runs of 1s. */
export function runs(mask: ArrayLike<number>): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < mask.length; i++) {
    if (mask[i] !== 1) continue;
    const s = i;
    while (i < mask.length && mask[i] === 1) i++;
    out.push([s, i]);
  }
  return out;
}

/**
 * Positions of each turn's sampled ids inside a sample: the sample is the concatenation of its
 * turns' context (bridge + delta) and output, root to leaf.
 */
export function outputRanges(
  sample: Sample,
  tree: TurnTreeExport,
): { turn: string; range: [number, number] }[] {
  const byId = new Map(tree.turns.map((t) => [t.id, t]));
  return sample.turns.map((id) => {
    const t = byId.get(id)!;
    return { turn: id, range: [t.prompt_ids.length, t.prompt_ids.length + t.output_ids.length] };
  });
}

/** Sum of a mask over `[a, b)`. */
export function sum(mask: ArrayLike<number>, [a, b]: [number, number] = [0, mask.length]): number {
  let n = 0;
  for (let i = a; i < b; i++) n += mask[i];
  return n;
}
