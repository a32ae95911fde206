/**
 * Reading a request from its known prefix on (`gateway/agent/known_prefix.ts`) gives what
 * reading it whole gives. Differential: two gateways, one that keeps bodies (the default) and
 * one that keeps none (`knownPrefixBytes: 0`, every request read whole), get the same random
 * agent traffic in each protocol (Chat, Anthropic Messages, Responses, Gemini) over their real
 * agent routes: answers echoed back (arguments re-serialised, Claude Code's `cache_control`
 * moved), exact retries, rewrites of an earlier message, earlier calls sent in another form,
 * compaction, a changed system prompt or tool set, a sub-agent interleaved on the same rollout,
 * the body pretty-printed or its keys reordered, a repeated history key, a malformed tail. Every
 * answer's status and text must agree, and at the end every turn (how it mounted, its chain, its
 * prompt and output ids, its history) and every sample. The generation is a TEST DOUBLE whose
 * output is a function of the prompt ids, so the two gateways answer alike exactly when they
 * built the same prompt. The keeping gateway must have read most requests from a prefix.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createGateway, type Gateway } from "../../gateway/mod.ts";
import type { Completion, GenerationBackend, GenerationRequest } from "../../generation/mod.ts";
import { PolicyModel } from "../../model/mod.ts";
import { promptIds, type Rollout } from "../../trajectory/mod.ts";
import { answerText, toolCallText } from "../../runner/mod.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const model = await PolicyModel.load();

/** Outputs the TEST DOUBLE picks from: answers and tool calls, real Qwen3 ids. */
const OUTPUTS = await Promise.all([
  answerText("Short.", "Done with it."),
  answerText("Think it over.", "The tests pass now."),
  toolCallText("Look first.", "bash", { command: "ls -la" }),
  toolCallText("Read it.", "read_file", { path: "src/a.ts", limit: 20 }),
  toolCallText("Edit.", "bash", { command: "sed -i 's/a/b/' x.py", timeout: 30 }),
].map((text) => model.tokenizer.encode(text)));

/**
 * TEST DOUBLE at the generation boundary: the output is chosen by a hash of the whole prompt,
 * so equal prompts get equal answers and a prompt that differs almost surely gets another.
 */
class PromptHashBackend implements GenerationBackend {
  readonly name = "prompt-hash-test-double";
  generate(req: GenerationRequest): Promise<Completion> {
    let h = 2166136261;
    for (const id of req.promptIds) h = Math.imul(h ^ id, 16777619);
    const output_ids = OUTPUTS[(h >>> 0) % OUTPUTS.length];
    return Promise.resolve({ output_ids: [...output_ids], finish_reason: "stop" });
  }
}

/** A seeded PRNG (mulberry32), so a failing sequence replays from its seed. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    chance: (p: number) => next() < p,
    pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)],
  };
}
type Rng = ReturnType<typeof rng>;

interface Tool {
  name: string;
  description: string;
  schema: Json;
}

const TOOLS: Tool[] = [
  {
    name: "bash",
    description: "Run a command.",
    schema: {
      type: "object",
      properties: { command: { type: "string" }, timeout: { type: "integer" } },
    },
  },
  {
    name: "read_file",
    description: "Read a file.",
    schema: {
      type: "object",
      properties: { path: { type: "string" }, limit: { type: "integer" } },
    },
  },
];
const EXTRA_TOOL: Tool = {
  name: "grep",
  description: "Search.",
  schema: { type: "object", properties: { pattern: { type: "string" } } },
};

/** A call the answer made, protocol-neutral. */
interface Call {
  id: string;
  name: string;
  arguments: string;
}

/** One protocol: its route, its body from a history, the answer read back and echoed. */
interface Protocol {
  name: string;
  path: string;
  /** The wire history's first messages. */
  start(system: string, task: string): Json[];
  body(history: Json[], system: string, tools: Tool[]): Json;
  /** The answer's text and calls, and the wire messages the agent appends for it. */
  answer(response: Json, rnd: Rng): { text: string; calls: Call[]; echo: Json[] };
  /** What the agent appends after an answer: its tool results, or a user message. */
  results(calls: Call[], text: string): Json[];
  /** Changes the `k`th wire message's visible text (a rewrite). */
  rewrite(message: Json, text: string): Json;
  /** The same calls, their arguments written another way (edits in another form). */
  reform(message: Json): Json;
  /** Claude Code moves `cache_control` to the last block every request. */
  finish?(history: Json[]): Json[];
}

const spaced = (args: string) => JSON.stringify(JSON.parse(args), null, 1);

const chat: Protocol = {
  name: "chat",
  path: "v1/chat/completions",
  start: (system, task) => [{ role: "system", content: system }, { role: "user", content: task }],
  body: (messages, _system, tools) => ({
    model: "policy",
    messages,
    stream: false,
    tools: tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.schema },
    })),
  }),
  answer(res, rnd) {
    const m = res.choices[0].message;
    const calls: Call[] = (m.tool_calls ?? []).map((c: Json) => ({
      id: c.id,
      name: c.function.name,
      arguments: c.function.arguments,
    }));
    // pi re-serialises arguments; others echo them verbatim.
    const args = (a: string) => (rnd.chance(0.5) ? JSON.stringify(JSON.parse(a)) : a);
    const echo = {
      role: "assistant",
      content: m.content ?? "",
      ...(m.reasoning_content ? { reasoning_content: m.reasoning_content } : {}),
      ...(calls.length
        ? {
          tool_calls: calls.map((c) => ({
            id: c.id,
            type: "function",
            function: { name: c.name, arguments: args(c.arguments) },
          })),
        }
        : {}),
    };
    return { text: m.content ?? "", calls, echo: [echo] };
  },
  results: (calls, text) =>
    calls.length
      ? calls.map((c) => ({
        role: "tool",
        tool_call_id: c.id,
        content: `ran ${c.name}: ${text.length} ok`,
      }))
      : [{ role: "user", content: "Go on." }],
  rewrite: (m, text) => ({ ...m, content: `${m.content} ${text}` }),
  reform: (m) =>
    m.tool_calls
      ? {
        ...m,
        tool_calls: m.tool_calls.map((c: Json) => ({
          ...c,
          function: { ...c.function, arguments: spaced(c.function.arguments) },
        })),
      }
      : m,
};

const anthropic: Protocol = {
  name: "anthropic",
  path: "v1/messages",
  start: (_system, task) => [{ role: "user", content: [{ type: "text", text: task }] }],
  // Claude Code's key order: the history before the system prompt and the tools.
  body: (messages, system, tools) => ({
    model: "policy",
    messages,
    system: [{ type: "text", text: system, cache_control: { type: "ephemeral" } }],
    tools: tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.schema })),
    max_tokens: 2048,
    stream: false,
  }),
  answer(res) {
    const blocks = res.content as Json[];
    const calls: Call[] = blocks.filter((b) => b.type === "tool_use").map((b) => ({
      id: b.id,
      name: b.name,
      arguments: JSON.stringify(b.input),
    }));
    const text = blocks.filter((b) => b.type === "text").map((b) => b.text).join("");
    return { text, calls, echo: [{ role: "assistant", content: blocks }] };
  },
  results: (calls, text) => [{
    role: "user",
    content: calls.length
      ? calls.map((c) => ({
        type: "tool_result",
        tool_use_id: c.id,
        content: `ran ${c.name}: ${text.length} ok`,
      }))
      : [{ type: "text", text: "Go on." }],
  }],
  rewrite: (m, text) => ({
    ...m,
    content: [
      ...(typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content),
      { type: "text", text },
    ],
  }),
  reform: (m) =>
    m.role === "assistant" && Array.isArray(m.content)
      ? {
        ...m,
        content: m.content.map((b: Json) =>
          b.type === "tool_use"
            ? { ...b, input: Object.fromEntries(Object.entries(b.input).reverse()) }
            : b
        ),
      }
      : m,
  finish(history) {
    const out = structuredClone(history);
    for (const m of out) {
      if (Array.isArray(m.content)) { for (const b of m.content) delete b.cache_control; }
    }
    const last = out.at(-1)?.content;
    if (Array.isArray(last) && last.length) last.at(-1).cache_control = { type: "ephemeral" };
    return out;
  },
};

const responses: Protocol = {
  name: "responses",
  path: "v1/responses",
  start: (
    _system,
    task,
  ) => [{ type: "message", role: "user", content: [{ type: "input_text", text: task }] }],
  body: (input, system, tools) => ({
    model: "policy",
    instructions: system,
    input,
    tools: tools.map((t) => ({
      type: "function",
      name: t.name,
      description: t.description,
      parameters: t.schema,
    })),
    stream: false,
    store: false,
  }),
  answer(res) {
    const items = res.output as Json[];
    const calls: Call[] = items.filter((i) => i.type === "function_call").map((i) => ({
      id: i.call_id,
      name: i.name,
      arguments: i.arguments,
    }));
    const text = items.filter((i) => i.type === "message").flatMap((i) =>
      i.content.map((c: Json) => c.text ?? "")
    ).join("");
    return { text, calls, echo: items };
  },
  results: (calls, text) =>
    calls.length
      ? calls.map((c) => ({
        type: "function_call_output",
        call_id: c.id,
        output: `ran ${c.name}: ${text.length} ok`,
      }))
      : [{ type: "message", role: "user", content: [{ type: "input_text", text: "Go on." }] }],
  rewrite: (m, text) =>
    m.type === "message"
      ? { ...m, content: [...m.content, { type: "input_text", text }] }
      : m.type === "function_call_output"
      ? { ...m, output: `${m.output} ${text}` }
      : m,
  reform: (m) => m.type === "function_call" ? { ...m, arguments: spaced(m.arguments) } : m,
};

const gemini: Protocol = {
  name: "gemini",
  path: "v1beta/models/policy:generateContent",
  start: (_system, task) => [{ role: "user", parts: [{ text: task }] }],
  body: (contents, system, tools) => ({
    contents,
    systemInstruction: { parts: [{ text: system }] },
    tools: [{
      functionDeclarations: tools.map((t) => ({
        name: t.name,
        description: t.description,
        parametersJsonSchema: t.schema,
      })),
    }],
  }),
  answer(res) {
    const parts = res.candidates[0].content.parts as Json[];
    const calls: Call[] = parts.filter((p) => p.functionCall).map((p) => ({
      id: p.functionCall.id ?? "",
      name: p.functionCall.name,
      arguments: JSON.stringify(p.functionCall.args ?? {}),
    }));
    const text = parts.filter((p) => p.text !== undefined && !p.thought).map((p) => p.text).join(
      "",
    );
    return { text, calls, echo: [res.candidates[0].content] };
  },
  results: (calls, text) => [{
    role: "user",
    parts: calls.length
      ? calls.map((c) => ({
        functionResponse: {
          id: c.id,
          name: c.name,
          response: { output: `ran ${c.name}: ${text.length} ok` },
        },
      }))
      : [{ text: "Go on." }],
  }],
  rewrite: (m, text) => ({ ...m, parts: [...m.parts, { text }] }),
  reform: (m) =>
    m.role === "model"
      ? {
        ...m,
        parts: m.parts.map((p: Json) =>
          p.functionCall
            ? {
              ...p,
              functionCall: {
                ...p.functionCall,
                args: Object.fromEntries(Object.entries(p.functionCall.args ?? {}).reverse()),
              },
            }
            : p
        ),
      }
      : m,
};

/** What one agent conversation holds on the client side. */
interface Conversation {
  system: string;
  history: Json[];
  tools: Tool[];
  /** The last body sent, as text (a retry sends it again). */
  sent?: string;
  last?: { calls: Call[]; text: string; echo: Json[] };
}

/** One side of the comparison: a gateway, its rollout, and the agents' conversations on it. */
class Side {
  readonly gw: Gateway;
  rollout!: { id: string; token: string };
  readonly conversations: Conversation[] = [];
  constructor(keep: boolean) {
    this.gw = createGateway({
      model,
      backend: new PromptHashBackend(),
      ...(keep ? {} : { limits: { knownPrefixBytes: 0 } }),
    });
  }
  async create(): Promise<void> {
    const res = await this.gw.app.request("/api/rollouts", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    this.rollout = await res.json();
  }
  async send(p: Protocol, text: string): Promise<{ status: number; json: Json }> {
    const res = await this.gw.app.request(`/rollout/${this.rollout.id}/${p.path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${this.rollout.token}`,
      },
      body: text,
    });
    const body = await res.text();
    let json: Json;
    try {
      json = JSON.parse(body);
    } catch {
      json = body;
    }
    return { status: res.status, json };
  }
  get r(): Rollout {
    return this.gw.rollouts.get(this.rollout.id)!;
  }
}

/** Mostly extensions, as agents send; each other kind now and then. */
const OPS = [
  ...Array(14).fill("extend"),
  "retry",
  "rewrite",
  "reform",
  "compact",
  "system",
  "tools",
  "pretty",
  "keyorder",
  "dupkey",
  "malformed",
  "switch",
] as const;
type Op =
  | "extend"
  | "retry"
  | "rewrite"
  | "reform"
  | "compact"
  | "system"
  | "tools"
  | "pretty"
  | "keyorder"
  | "dupkey"
  | "malformed"
  | "switch";

/** The body text an op sends for a conversation (and the conversation as it is after it). */
function bodyFor(p: Protocol, c: Conversation, op: Op, rnd: Rng): string | undefined {
  const finish = (h: Json[]) => (p.finish ? p.finish(h) : h);
  switch (op) {
    case "retry":
      return c.sent;
    case "extend":
      if (c.last) {
        c.history = finish([...c.history, ...c.last.echo, ...p.results(c.last.calls, c.last.text)]);
      }
      break;
    case "rewrite": {
      if (c.history.length < 2) return undefined;
      const k = rnd.int(c.history.length);
      c.history = finish(
        c.history.map((m, i) => (i === k ? p.rewrite(m, `edited ${rnd.int(1000)}`) : m)),
      );
      break;
    }
    case "reform":
      c.history = finish(c.history.map(p.reform));
      break;
    case "compact":
      c.history = finish([
        ...p.start(c.system, "Summary of the work so far: tests fixed."),
        ...(c.last ? p.results([], c.last.text) : []),
      ]);
      break;
    case "system":
      c.system = `${c.system} Be brief.`;
      if (p === chat) c.history = [{ role: "system", content: c.system }, ...c.history.slice(1)];
      break;
    case "tools":
      c.tools = c.tools.length > TOOLS.length ? TOOLS : [...TOOLS, EXTRA_TOOL];
      break;
    case "pretty":
      return JSON.stringify(p.body(c.history, c.system, c.tools), null, 2);
    case "keyorder":
      return JSON.stringify(
        Object.fromEntries(Object.entries(p.body(c.history, c.system, c.tools)).reverse()),
      );
    case "dupkey": {
      // The history key twice: JSON keeps the last, which here drops the newest message.
      const body = JSON.stringify(p.body(c.history, c.system, c.tools));
      const field = p === responses ? "input" : p === gemini ? "contents" : "messages";
      return `${body.slice(0, -1)},${JSON.stringify(field)}:${
        JSON.stringify(c.history.slice(0, -1))
      }}`;
    }
    case "malformed": {
      const body = JSON.stringify(p.body(c.history, c.system, c.tools));
      return body.slice(0, body.length - 1 - rnd.int(40));
    }
    case "switch":
      return undefined;
  }
  return JSON.stringify(p.body(c.history, c.system, c.tools));
}

/** A turn as both sides must agree on it (tool-call ids minted by the gateway left out). */
function turnView(r: Rollout, k: number): string {
  const t = r.turns[k];
  const calls = new Map<string, string>();
  const id = (x: string) => calls.get(x) ?? (calls.set(x, `#${calls.size}`), calls.get(x)!);
  const messages = t.messages.map((m) =>
    JSON.stringify(
      m,
      (key, v) => (key === "id" || key === "tool_call_id") && typeof v === "string" ? id(v) : v,
    )
  );
  return JSON.stringify({
    index: t.index,
    mount: t.mount,
    chain: r.chains[t.chain].label,
    status: t.status,
    retries: t.retries,
    parent: t.parent?.index ?? null,
    prompt: Array.from(promptIds(t)),
    output: Array.from(t.outputIds),
    depth: t.history.depth,
    edits: t.historyEdits.map(([i]) => i),
    messages,
  });
}

async function runSequence(
  p: Protocol,
  seed: number,
  steps: number,
): Promise<
  { fromPrefix: number; whole: number; expected: number; missed: number; turns: number }
> {
  const rnd = rng(seed);
  const sides = [new Side(true), new Side(false)];
  for (const s of sides) await s.create();
  // Two conversations on one rollout: a main agent and a sub-agent with its own system prompt.
  const starts = [["You are a coding agent.", "Fix the failing test."], [
    "You are a sub-agent.",
    "Find the config loader.",
  ]];
  for (const s of sides) {
    for (const [system, task] of starts) {
      s.conversations.push({ system, history: p.start(system, task), tools: TOOLS });
    }
  }
  let current = 0;
  /** Per conversation: whether its last request was answered, and sent as agents write JSON. */
  const plain = [false, false];
  let expected = 0, missed = 0;
  for (let step = 0; step < steps; step++) {
    const op: Op = step === 0 ? "extend" : rnd.pick(OPS as readonly Op[]);
    if (op === "switch") {
      current = 1 - current;
      continue;
    }
    // Both sides draw the same decisions: one generator per side, from the same state.
    const state = rnd.next();
    const results = [];
    const before = sides[0].gw.knownPrefixes.stats.fromPrefix;
    for (const s of sides) {
      const c = s.conversations[current];
      const text = bodyFor(p, c, op, rng(Math.floor(state * 2 ** 31)));
      if (text === undefined) break;
      c.sent = text;
      const res = await s.send(p, text);
      results.push(res);
      if (res.status === 200) c.last = p.answer(res.json, rng(Math.floor(state * 2 ** 31)));
    }
    if (results.length < 2) continue;
    const where = `${p.name} seed ${seed} step ${step} (${op})`;
    // An extension of an answered request is read from its prefix, unless the rollout's other
    // conversation changed course so often meanwhile that its lane made way.
    if (op === "extend" && plain[current]) {
      expected++;
      if (sides[0].gw.knownPrefixes.stats.fromPrefix === before) missed++;
    }
    plain[current] = results[0].status === 200 &&
      !["pretty", "keyorder", "dupkey", "retry"].includes(op);
    assert.equal(
      results[0].status,
      results[1].status,
      `${where}: ${JSON.stringify(results.map((r) => r.json)).slice(0, 600)}`,
    );
    if (results[0].status === 200) {
      const [a, b] = sides.map((s) => s.conversations[current].last!);
      assert.equal(a.text, b.text, `${where}: answers differ`);
      assert.deepEqual(
        a.calls.map((c) => [c.name, c.arguments]),
        b.calls.map((c) => [c.name, c.arguments]),
        where,
      );
    }
  }
  const [a, b] = sides.map((s) => s.r);
  assert.equal(a.turns.length, b.turns.length, `${p.name} seed ${seed}: turn counts`);
  for (let k = 0; k < a.turns.length; k++) {
    assert.equal(turnView(a, k), turnView(b, k), `${p.name} seed ${seed}: turn ${k}`);
  }
  const samples = sides.map((s) =>
    s.r.samples().map((x) => [x.branch, Array.from(x.input_ids), Array.from(x.loss_mask)])
  );
  assert.deepEqual(samples[0], samples[1], `${p.name} seed ${seed}: samples`);
  assert.equal(
    sides[1].gw.knownPrefixes.stats.fromPrefix,
    0,
    "the side that keeps nothing reads all whole",
  );
  return { ...sides[0].gw.knownPrefixes.stats, expected, missed, turns: a.turns.length };
}

for (const p of [chat, anthropic, responses, gemini]) {
  Deno.test(`known prefix: ${p.name} requests read from their known prefix equal the same read whole`, async () => {
    let expected = 0, missed = 0, turns = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const run = await runSequence(p, seed, 30);
      expected += run.expected;
      missed += run.missed;
      turns += run.turns;
    }
    assert.ok(turns >= 200, `${p.name}: only ${turns} turns were recorded`);
    assert.ok(expected >= 100, `${p.name}: only ${expected} extensions were checked`);
    assert.ok(missed <= expected / 20, `${p.name}: ${missed} of ${expected} extensions read whole`);
  });
}

Deno.test("known prefix: every body is freed once read, a lane holds only offsets and digests, and goes when its rollout ends", async () => {
  const side = new Side(true);
  await side.create();
  const prefixes = side.gw.knownPrefixes;
  const bodies: Uint8Array[] = [];
  const read = prefixes.read.bind(prefixes);
  prefixes.read = (rollout, adapter, url, bytes) => {
    bodies.push(bytes);
    return read(rollout, adapter, url, bytes);
  };
  let history = chat.start("You are a coding agent.", "Fix the failing test.");
  for (let turn = 0; turn < 4; turn++) {
    const res = await side.send(chat, JSON.stringify(chat.body(history, "", TOOLS)));
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const { text, calls, echo } = chat.answer(res.json, rng(turn));
    history = [...history, ...echo, ...chat.results(calls, text)];
  }
  assert.equal(prefixes.stats.fromPrefix, 3, "turns 2–4 read from their known prefix");
  // Freed means detached: its memory went back at once, not at the next major GC.
  assert.deepEqual(bodies.map((b) => b.byteLength), [0, 0, 0, 0]);
  // One lane: 4 bytes of offset, 4 of message count and 32 of digest per element (arrays grown
  // by doubling), far below the ~2 kB bodies it stands for.
  const elements = history.length - 2; // the last tool results were never sent
  assert.ok(prefixes.bytes >= 40 * elements, `${prefixes.bytes} bytes for ${elements} elements`);
  assert.ok(
    prefixes.bytes <= 2 * 40 * elements,
    `${prefixes.bytes} bytes for ${elements} elements`,
  );
  const finished = await side.gw.app.request(`/api/rollouts/${side.rollout.id}/finish`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ reward: 1 }),
  });
  assert.equal(finished.status, 200, await finished.text());
  assert.equal(prefixes.bytes, 0, "the lane went with its rollout");
});

Deno.test("known prefix: the same bytes after the history are not parsed again; the request keeps the last turn's tools array", async () => {
  const side = new Side(true);
  await side.create();
  const prefixes = side.gw.knownPrefixes;
  const requests: { tools: unknown; sampling: { temperature?: number } }[] = [];
  const read = prefixes.read.bind(prefixes);
  prefixes.read = (rollout, adapter, url, bytes) => {
    const r = read(rollout, adapter, url, bytes);
    requests.push(r.request);
    return r;
  };
  let history = chat.start("You are a coding agent.", "Fix the failing test.");
  // Turns 4 and 5 send another tail (a temperature after the tools): parsed, then kept.
  for (const extra of [{}, {}, {}, { temperature: 0.5 }, { temperature: 0.5 }]) {
    const body = { ...chat.body(history, "", TOOLS), ...extra };
    const res = await side.send(chat, JSON.stringify(body));
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const { text, calls, echo } = chat.answer(res.json, rng(requests.length));
    history = [...history, ...echo, ...chat.results(calls, text)];
  }
  assert.equal(prefixes.stats.fromPrefix, 4, "turns 2–5 read from their known prefix");
  const [first, second, third, fourth, fifth] = requests;
  assert.notEqual(second.tools, first.tools, "turn 2: its tail parsed (the lane read whole)");
  assert.deepEqual(second.tools, first.tools);
  assert.equal(third.tools, first.tools, "turn 3: the same tail, the interned tools");
  assert.notEqual(fourth.tools, first.tools, "turn 4: another tail, parsed");
  assert.deepEqual(
    [third, fourth, fifth].map((r) => r.sampling.temperature),
    [undefined, 0.5, 0.5],
  );
  assert.equal(fifth.tools, first.tools, "turn 5: turn 4's tail again");
  const turns = side.r.turns;
  assert.equal(turns.length, 5);
  for (const t of turns) assert.equal(t.tools, first.tools, "every turn under one interned array");
});
