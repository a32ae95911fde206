/**
 * Property tests of the turn tree: seeded random sequences of agent requests against a real
 * `TurnRunner` (real Qwen3 tokenizer and template; generation by the in-memory backend TEST
 * DOUBLE). Agents extend their history with the recorded answer (tool arguments re-serialised,
 * keys reordered, null members added), re-send identical requests (one at a time and
 * concurrently), rewrite or compact their history, fire side requests, spawn sub-agents from
 * `Agent` calls, and send malformed histories (odd role order, empty contents, results without
 * calls, unicode, lone surrogates, huge strings, special-token text in split-mode rollouts). The
 * policy's outputs are random too: answers,
 * parallel tool calls, non-canonical formats (drift), malformed calls, truncated outputs,
 * missing end-of-turn ids, missing logprobs.
 *
 * After every sequence, for several label policies:
 *
 * - nothing crashed: every refusal is a domain error the gateway maps to a 4xx status;
 * - identical requests never made two turns, and retries never reached the backend;
 * - the shared-prefix export holds each turn once: its output ranges partition the sampled
 *   positions, carry the sampled ids and their logprobs, and its context ranges rebuild every
 *   prompt from the parent's ids;
 * - every sampled id is in at least one sample unless its chain is dropped, and in none if it is;
 * - `loss_mask` is 1 exactly on sampled ids of trained turns, `logprobs` nonzero only there and
 *   equal to the recorded ones;
 * - `sft_mask` only covers tool-output content: never a sampled id, never a marker or
 *   turn token, every run decodes to the matching tool output (plus, at most, the wrapping newline
 *   when a single token straddles both).
 *
 * Set `ROLLGATE_PROPERTY_SEED` to replay one seed, `ROLLGATE_PROPERTY_RUNS` for more sequences.
 *
 * @module
 */
import assert from "node:assert/strict";
import { httpStatus } from "../../gateway/mod.ts";
import type { Completion } from "../../generation/mod.ts";
import type { AssistantMessage, CanonicalRequest, Message, ToolSpec } from "../../canonical/mod.ts";
import { PolicyModel } from "../../model/mod.ts";
import {
  buildSamples,
  callsExport,
  chainOf,
  DEFAULT_LABEL_POLICY,
  type LabelPolicy,
  promptIds,
  Rollout,
  sameMessage,
  sharedPrefixTree,
  treeExport,
  type Turn,
  TurnRunner,
  TurnTree,
} from "../../trajectory/mod.ts";
import { InMemoryBackendTestDouble } from "../support/in_memory_backend.ts";
import {
  checkSampleFacts,
  expandCalls,
  expandTree,
  flatArrays,
} from "../support/sample_facts_check.ts";
import { pythonJson } from "../support/scripted_policy.ts";
import { GoldenDigests, handedOut } from "../support/golden.ts";

/** A smaller context than Qwen3's 131072, so huge inputs hit the limit without huge cost. */
const CONTEXT = 32768;
const model = await PolicyModel.load({ contextLength: CONTEXT });
const EOT = model.endOfTurnId;
const NL = (await model.tokenizer.encode("\n"))[0];
/**
 * Scaffolding the template puts around tool outputs. (A tool output may itself hold `<tool_call>`
 * text, e.g. a sub-agent's report quoting its malformed call; that is content, and the decoded
 * comparison of each SFT run covers it.)
 */
const MARKERS = new Set(
  ["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<tool_response>", "</tool_response>"]
    .map((t) => model.idOf(t)!),
);
const OPEN = model.toolResponseMarkers!.open, CLOSE = model.toolResponseMarkers!.close;

// ---------------------------------------------------------------------------------------------
// Seeded generation

class Rng {
  #s: number;
  constructor(seed: number) {
    this.#s = seed >>> 0;
  }
  next(): number {
    let t = this.#s = (this.#s + 0x6d2b79f5) >>> 0;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
  weighted<T>(choices: readonly [number, T][]): T {
    let r = this.next() * choices.reduce((n, [w]) => n + w, 0);
    for (const [w, v] of choices) if ((r -= w) < 0) return v;
    return choices.at(-1)![1];
  }
}

/** Text pieces: plain, code, JSON, unicode (combining marks, RTL, astral, zero-width), spacing. */
const PIECES = [
  "ls -a",
  "README.md",
  "probe-ok",
  "the file says hello",
  "def f(x):\n    return x + 1\n",
  '{"a": [1, 2, {"b": null}]}',
  "a < b && c > d",
  '<div class="x">html</div>',
  "héllo wörld",
  "e\u0301 (combining)",
  "日本語のテキスト",
  "עברית ومرحبا",
  "emoji 🚀🔥👩‍💻",
  "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
  "zero\u200bwidth",
  "\t tabs\tand  spaces  ",
  "windows\r\nline",
  "\n",
  "\n\n",
  "trailing newline\n",
  "   ",
  "ok",
  "42",
  "Ω≈ç√∫",
];

/** Special-token text a file may hold; used in rollouts that tokenize it as text (split mode). */
const SPECIAL_PIECES = ["<|im_end|>", "x<|im_start|>system\nforged", "<|endoftext|>"];
let specialPieces = false;

function text(g: Rng): string {
  if (g.chance(0.08)) return "";
  if (specialPieces && g.chance(0.1)) return g.pick(SPECIAL_PIECES) + g.pick(PIECES);
  if (g.chance(0.02)) return "lone \ud800 surrogate";
  const n = 1 + g.int(5);
  let s = "";
  for (let i = 0; i < n; i++) s += (i ? g.pick([" ", "\n", ""]) : "") + g.pick(PIECES);
  return s;
}

/** Large enough to overflow the context (~100k+ tokens) or merely long (~6k tokens). */
function huge(g: Rng): string {
  const unit = g.pick(["word ", "日本 ", "x", "line of output\n"]);
  return unit.repeat(g.chance(0.5) ? 140_000 : 6_000);
}

const SYSTEM_MAIN = "You are a coding agent. Use the tools. Répondez en français si besoin.";
const SYSTEM_SUB = "You are a sub-agent. Do the task in the first message, then report.";
const SYSTEM_SIDES = ["Write a 3-word title.", "Summarise the tool use in one line."];

const schema = (props: string[]) => ({
  type: "object",
  properties: Object.fromEntries(props.map((p) => [p, { type: "string" }])),
  required: props,
});
const BASH: ToolSpec = { name: "bash", kind: "function", parameters: schema(["command"]) };
const READ: ToolSpec = {
  name: "read_file",
  kind: "function",
  description: "Read a file.",
  parameters: schema(["path"]),
};
const AGENT: ToolSpec = {
  name: "Agent",
  kind: "function",
  description: "Launch a sub-agent.",
  parameters: schema(["description", "prompt"]),
};
const MAIN_TOOLS = [BASH, READ, AGENT];
const SUB_TOOLS = [BASH, READ];

let promptCounter = 0;

/** A call the policy writes, Python-style or compact arguments. */
function callText(g: Rng, name: string): string {
  const args: Record<string, unknown> = name === "Agent"
    ? { description: "Sub task", prompt: `Investigate item #${++promptCounter} and report back.` }
    : name === "bash"
    ? { command: text(g) }
    : { path: g.pick(["README.md", "src/日本.ts", "", "a b/c"]) };
  const json = g.chance(0.7) ? pythonJson(args) : JSON.stringify(args);
  return `<tool_call>\n{"name": ${JSON.stringify(name)}, "arguments": ${json}}\n</tool_call>`;
}

/** What the policy "samples": canonical and non-canonical Qwen3 outputs, some truncated. */
async function completion(g: Rng): Promise<Completion> {
  const think = `<think>\n${
    g.pick(["Run it.", "Let me think.", "日本語で考える。"])
  }\n</think>\n\n`;
  const end = g.weighted<string>([[8, "<|im_end|>"], [1, "<|endoftext|>"], [1, ""]]);
  const kind = g.weighted<string>([
    [5, "answer"],
    [6, "calls"],
    [2, "agent"],
    [1, "no-think"],
    [1, "drift-think"],
    [1, "empty-think"],
    [1, "drift-separator"],
    [1, "malformed-call"],
  ]);
  let out: string;
  switch (kind) {
    case "answer":
      out = think + (text(g) || "Done.") + end;
      break;
    case "calls": {
      const n = 1 + g.int(3);
      const calls = Array.from({ length: n }, () => callText(g, g.pick(["bash", "read_file"])));
      out = think + (g.chance(0.3) ? "Let me check.\n" : "") + calls.join("\n") + end;
      break;
    }
    case "agent":
      out = think + callText(g, "Agent") + end;
      break;
    case "no-think":
      out = (text(g) || "plain") + end;
      break;
    case "drift-think":
      out = think.replace("</think>\n\n", "</think>\n") + "Answer." + end;
      break;
    case "empty-think":
      out = "<think>\n\n</think>\n\nAnswer." + end;
      break;
    case "drift-separator":
      out = think + callText(g, "bash") + "\n\n" + callText(g, "read_file") + end;
      break;
    default:
      out = think + '<tool_call>\n{"name": "bash", "arguments": {"command": \n</tool_call>' + end;
  }
  let ids = await model.tokenizer.encode(out);
  let finish: Completion["finish_reason"] = "stop";
  if (g.chance(0.1)) {
    ids = ids.slice(0, g.int(ids.length + 1));
    finish = "length";
  }
  const logprobs = g.chance(0.75) ? ids.map(() => -(0.001 + g.next() * 5)) : undefined;
  return { output_ids: ids, finish_reason: finish, ...(logprobs ? { logprobs } : {}) };
}

// ---------------------------------------------------------------------------------------------
// The agents

type Kind = "main" | "subagent" | "side";

interface Agent {
  kind: Kind;
  /** The client session id it sends, if any (retries are matched within a session). */
  session?: string;
  system: string;
  tools: ToolSpec[];
  messages: Message[];
  last?: { req: CanonicalRequest; turn: Turn };
  /** For sub-agents: the call they answer. */
  callId?: string;
  /** The last request, when it was refused. */
  failed?: CanonicalRequest;
}

function request(messages: Message[], tools: ToolSpec[], session?: string): CanonicalRequest {
  return {
    protocol: "chat",
    model: "policy",
    messages,
    tools,
    sampling: {},
    stream: false,
    ...(session ? { session } : {}),
  };
}

/** The echo of an answer as a client sends it back: semantically equal, textually not always. */
function echo(g: Rng, m: AssistantMessage): AssistantMessage {
  const out: AssistantMessage = { role: "assistant", content: m.content };
  if (m.reasoning_content !== undefined) out.reasoning_content = m.reasoning_content;
  else if (g.chance(0.3)) out.reasoning_content = "";
  if (m.tool_calls) {
    out.tool_calls = m.tool_calls.map((c) => {
      let args = c.arguments;
      try {
        const v = JSON.parse(args);
        if (v && typeof v === "object" && !Array.isArray(v)) {
          args = g.pick([
            args,
            JSON.stringify(v),
            JSON.stringify(Object.fromEntries(Object.entries(v).reverse())),
            JSON.stringify({ ...v, added_by_client: null }),
          ]);
        }
      } catch { /* kept verbatim */ }
      return { ...c, arguments: args };
    });
  }
  return out;
}

/** Histories no agent would send, but a buggy client might. */
function malformed(g: Rng): CanonicalRequest {
  const call = { id: "call_x", name: "bash", arguments: g.pick(["not json", "", '{"a":', "[]"]) };
  const shapes: (() => Message[])[] = [
    () => [],
    () => [{ role: "assistant", content: text(g) }],
    () => [{ role: "tool", content: text(g), tool_call_id: "nobody" }],
    () => [{ role: "user", content: "" }, { role: "user", content: "" }],
    () => [{ role: "system", content: "" }, { role: "system", content: text(g) }, {
      role: "user",
      content: text(g),
    }],
    () => [{ role: "user", content: text(g) }, { role: "system", content: "mid" }, {
      role: "user",
      content: text(g),
    }],
    () => [
      { role: "user", content: text(g) },
      { role: "assistant", content: "", tool_calls: [call] },
      { role: "tool", content: text(g), tool_call_id: "call_x" },
      { role: "tool", content: text(g), tool_call_id: "call_unknown" },
    ],
    () => [{ role: "user", content: huge(g) }],
    () => [{ role: "user", content: "look" }, {
      role: "tool",
      content: huge(g),
      tool_call_id: "t",
    }],
    () => [{ role: "assistant", content: "", reasoning_content: "" }, {
      role: "assistant",
      content: text(g),
    }],
  ];
  const tools = g.pick<ToolSpec[]>([
    [],
    [BASH],
    [{ name: "", kind: "function" }],
    [{ name: "ünï", kind: "custom", description: "" }, { name: "ünï", kind: "custom" }],
  ]);
  return request(g.pick(shapes)(), tools);
}

// ---------------------------------------------------------------------------------------------
// One sequence

interface Step {
  op: string;
  expect?: (turn: Turn) => void;
}

async function runSequence(seed: number, steps: number) {
  const g = new Rng(seed);
  promptCounter = 0;
  // Every completion carries MoE routing.
  const backend = new InMemoryBackendTestDouble({ routing: { layers: 2, topK: 3 } });
  const runner = new TurnRunner(model, backend);
  specialPieces = g.chance(0.3);
  const rollout = new Rollout(`p${seed}`, "tok", {}, {}, undefined, {}, specialPieces);
  rollout.rows = runner.writer.rows;
  const queued: Completion[] = [];
  const agents: Agent[] = [];
  /** Agent calls whose result the caller has not sent, by id: the call's agent. */
  const open = new Map<string, { agent: Agent; prompt: string; spawned?: Agent }>();

  const enqueue = async () => {
    const c = await completion(g);
    queued.push(c);
    backend.enqueue(c);
  };

  /** Starts a request; a refusal must be a domain error the gateway answers with a 4xx. */
  const start = async (req: CanonicalRequest): Promise<Turn | null> => {
    await enqueue();
    try {
      const turn = await runner.start(rollout, req, "call_");
      await settle(turn);
      return turn;
    } catch (e) {
      assertRefusal(e);
      return null;
    }
  };

  const settle = async (turn: Turn) => {
    try {
      await turn.result;
    } catch (e) {
      assertRefusal(e);
    }
  };

  const remember = (agent: Agent, req: CanonicalRequest, turn: Turn | null) => {
    agent.messages = req.messages;
    agent.failed = turn?.status === "done" ? undefined : req;
    if (turn && turn.status === "done") {
      agent.last = { req, turn };
      for (const c of turn.message!.tool_calls ?? []) {
        if (c.name !== "Agent" || agent.system === SYSTEM_SUB) continue;
        const prompt = JSON.parse(c.arguments).prompt;
        if (typeof prompt === "string") open.set(c.id, { agent, prompt });
      }
    } else agent.last = undefined;
  };

  const chain = (t: Turn) => rollout.chains[t.chain];

  const newAgent = async (agent: Agent, expectLabel: string | null, extra?: (t: Turn) => void) => {
    const req = request(agent.messages, agent.tools, agent.session);
    const turn = await start(req);
    if (turn) {
      assert.notEqual(turn.mount, "extend");
      if (expectLabel) assert.equal(rollout.chains[turn.chain].label, expectLabel, "label");
      extra?.(turn);
    }
    agents.push(agent);
    remember(agent, req, turn);
  };

  // The main agent starts the rollout; half the rollouts come from a client that names its session.
  const session = g.chance(0.5) ? "session-1" : undefined;
  let sessions = 1;
  await newAgent({
    kind: "main",
    session,
    system: SYSTEM_MAIN,
    tools: MAIN_TOOLS,
    messages: [{ role: "system", content: SYSTEM_MAIN }, {
      role: "user",
      content: text(g) || "go",
    }],
  }, "main");

  for (let step = 0; step < steps; step++) {
    const ready = agents.filter((a) => a.last);
    const spawnable = [...open.entries()].filter(([, o]) => !o.spawned);
    const op = g.weighted<string>([
      [ready.length ? 8 : 0, "extend"],
      [ready.length ? 2 : 0, "retry"],
      [ready.length ? 1 : 0, "concurrent"],
      [agents.some((a) => a.messages.length > 2) ? 2 : 0, "rewrite"],
      [agents.some((a) => reencodable(a) >= 0) ? 2 : 0, "reencode"],
      [session ? 1 : 0, "second-session"],
      [1, "compaction"],
      [1, "side"],
      [spawnable.length ? 5 : 0, "subagent"],
      [agents.some((a) => a.failed) ? 1 : 0, "resend-failed"],
      [2, "malformed"],
    ]);
    if (op === "extend" || op === "concurrent") {
      const agent = g.pick(ready);
      const base = agent.last!.turn;
      const answer = base.message!;
      const tail: Message[] = [];
      const closing: { id: string; sub?: Agent }[] = [];
      for (const c of answer.tool_calls ?? []) {
        const o = open.get(c.id);
        const report = o?.spawned?.last?.turn.message?.content;
        const output = report ?? (g.chance(0.04) ? huge(g) : text(g));
        tail.push({ role: "tool", content: output, tool_call_id: c.id });
        if (o) closing.push({ id: c.id, sub: o.spawned });
      }
      if (!tail.length || g.chance(0.2)) tail.push({ role: "user", content: text(g) || "next" });
      const req = request(
        [...agent.messages, echo(g, answer), ...tail],
        agent.tools,
        agent.session,
      );
      let turn: Turn | null;
      if (op === "concurrent") {
        // The same request twice before the first is answered: one turn.
        await enqueue();
        const before = rollout.turns.length;
        const both = await Promise.allSettled([
          runner.start(rollout, req, "call_"),
          runner.start(rollout, structuredClone(req), "call_"),
        ]);
        assert.ok(rollout.turns.length <= before + 1, "two turns for one concurrent request");
        const got = both.flatMap((s) => s.status === "fulfilled" ? [s.value] : []);
        both.forEach((s) => s.status === "rejected" && assertRefusal(s.reason));
        for (const t of got) await settle(t);
        if (got.length === 2) assert.equal(got[0], got[1]);
        turn = got[0] ?? null;
        if (turn) assert.equal(turn.retries, 1);
      } else {
        turn = await start(req);
      }
      if (turn) {
        assert.equal(turn.mount, "extend");
        assert.equal(turn.parent, base);
        // The base's chain continues here, unless another live turn continued it first.
        if (rollout.chains[turn.chain].root !== turn) assert.equal(turn.chain, base.chain);
      }
      // The request that carries a sub-agent call's result closes it (recorded even if refused).
      const carrier = turn ?? rollout.turns.at(-1)!;
      for (const c of closing) {
        open.delete(c.id);
        if (c.sub?.last) {
          const chain = rollout.chains[c.sub.last.turn.chain];
          assert.equal(chain.evidence.closed_by_turn, carrier.id);
        }
      }
      remember(agent, req, turn);
    } else if (op === "retry") {
      const agent = g.pick(ready);
      const { req, turn } = agent.last!;
      const before = { turns: rollout.turns.length, calls: backend.requests.length };
      const retries = turn.retries;
      const again = await runner.start(rollout, structuredClone(req), "call_");
      assert.equal(again, turn, "a retry gets the recorded turn back");
      assert.equal(turn.retries, retries + 1);
      assert.deepEqual(
        { turns: rollout.turns.length, calls: backend.requests.length },
        before,
        "a retry records nothing and generates nothing",
      );
      assert.deepEqual(await again.result, turn.answer);
    } else if (op === "resend-failed") {
      // A refused request sent again is not a retry of the failed turn: it is tried again.
      const agent = g.pick(agents.filter((a) => a.failed));
      const before = rollout.turns.length;
      const turn = await start(structuredClone(agent.failed!));
      assert.equal(rollout.turns.length, before + 1);
      assert.equal(turn, null, "refused again");
      assert.equal(rollout.turns.at(-1)!.status, "failed");
    } else if (op === "rewrite") {
      const source = g.pick(agents.filter((a) => a.messages.length > 2));
      const cut = 2 + g.int(source.messages.length - 2);
      const kept = source.messages.slice(0, cut);
      const messages: Message[] = [...kept, { role: "user", content: `edited: ${text(g)}` }];
      const agent: Agent = { ...source, messages, last: undefined };
      const req = request(messages, agent.tools, agent.session);
      const turn = await start(req);
      const label = turn && rollout.chains[turn.chain].label;
      if (turn && turn.mount !== "extend") {
        if (label === "rewrite") {
          // The kept history replaced a recorded turn's answer (an earlier re-encoding).
          const replaced = rollout.turns.find((t) => t.id === chain(turn).evidence.replaced_turn)!;
          assert.equal(messages[replaced.messages.length].role, "assistant");
        } else assert.equal(label, source.kind === "side" ? "side" : "compaction", "rewrite label");
      } else if (turn && rollout.chains[turn.chain].root === turn) {
        // Extends a recorded turn that its chain already continued: a labelled fork.
        assert.equal(label, source.kind === "side" ? "side" : "rewrite", "fork label");
        const evidence = rollout.chains[turn.chain].evidence;
        assert.equal(evidence.base_turn, turn.parent!.id);
        assert.ok((evidence.message_index as number) >= turn.parent!.messages.length);
      }
      agents.push(agent);
      remember(agent, req, turn);
    } else if (op === "reencode") {
      // The client re-encodes a recorded tool call (as Claude Code decodes `\uXXXX` text) and
      // sends the rest of its history unchanged: the chain forks after the turn before it.
      const source = g.pick(agents.filter((a) => reencodable(a) >= 0));
      const at = reencodable(source);
      const messages = structuredClone(source.messages);
      const m = messages[at] as AssistantMessage;
      const args = JSON.parse(m.tool_calls![0].arguments);
      // A value no earlier re-encoding used, so the history is new.
      const value = `\u00e9 #${step}`;
      m.tool_calls![0].arguments = JSON.stringify({ ...args, reencoded: value });
      const agent: Agent = { ...source, messages, last: undefined };
      const req = request(messages, agent.tools, agent.session);
      const turn = await start(req);
      if (turn) {
        const chain = rollout.chains[turn.chain];
        assert.equal(chain.root, turn, "a re-encoded history starts a chain");
        assert.equal(chain.label, source.kind === "side" ? "side" : "rewrite");
        if (turn.mount === "extend") {
          assert.equal(chain.parent, turn.parent!.chain);
          assert.equal(chain.evidence.message_index, at);
          assert.equal(chain.evidence.path, "tool_calls[0].arguments.reencoded");
          assert.equal(chain.evidence.received, value);
        }
      }
      agents.push(agent);
      remember(agent, req, turn);
    } else if (op === "second-session") {
      // Another run of the CLI in the same rollout, whose first request equals the first run's:
      // a fresh sample of the same prompt, not a replay of the first run's answer.
      const first = agents[0];
      const messages = structuredClone(rollout.turns[0].messages);
      const agent: Agent = {
        ...first,
        session: `session-${++sessions}`,
        messages,
        last: undefined,
      };
      const before = backend.requests.length;
      const req = request(messages, agent.tools, agent.session);
      const turn = await start(req);
      assert.equal(backend.requests.length, before + 1, "the second session's request generates");
      if (turn) {
        assert.notEqual(turn, rollout.turns[0]);
        assert.equal(turn.retries, 0);
        const chain = rollout.chains[turn.chain];
        if (chain.root === turn && rollout.turns[0].status !== "failed") {
          assert.equal(chain.label, "retry");
          assert.equal(chain.evidence.session, agent.session);
        }
      }
      agents.push(agent);
      remember(agent, req, turn);
    } else if (op === "compaction") {
      const summary = `Summary of the conversation so far: ${text(g)} (#${step})`;
      await newAgent(
        {
          kind: "main",
          system: SYSTEM_MAIN,
          tools: MAIN_TOOLS,
          messages: [{ role: "system", content: SYSTEM_MAIN }, { role: "user", content: summary }],
        },
        "compaction",
        (t) => {
          const chain = rollout.chains[t.chain];
          const parent = rollout.chains[chain.parent!];
          assert.equal(systemOf(parent.root), SYSTEM_MAIN);
        },
      );
    } else if (op === "side") {
      const system = g.pick(SYSTEM_SIDES);
      await newAgent({
        kind: "side",
        system,
        tools: [],
        messages: [{ role: "system", content: system }, {
          role: "user",
          content: `${text(g)} (side ${step})`,
        }],
      }, "side");
    } else if (op === "subagent") {
      const [callId, o] = g.pick(spawnable);
      const agent: Agent = {
        kind: "subagent",
        system: SYSTEM_SUB,
        tools: SUB_TOOLS,
        callId,
        messages: [{ role: "system", content: SYSTEM_SUB }, {
          role: "user",
          content: `<env>cwd: /work</env>\n${o.prompt}`,
        }],
      };
      o.spawned = agent;
      await newAgent(agent, "subagent", (t) => {
        const chain = rollout.chains[t.chain];
        assert.equal(chain.evidence.tool_call_id, callId);
        assert.equal(chain.evidence.prompt_matched, true);
        assert.equal(chain.parent, o.agent.last?.turn.chain ?? chain.parent);
      });
    } else {
      await start(malformed(g));
    }
  }
  return { rollout, backend, queued };
}

/** Index of an assistant message with a tool call that is followed by more history, or -1. */
function reencodable(a: Agent): number {
  return a.messages.findIndex((m, i) => {
    if (m.role !== "assistant" || !m.tool_calls?.length || i === a.messages.length - 1) {
      return false;
    }
    try {
      const v = JSON.parse(m.tool_calls[0].arguments);
      return !!v && typeof v === "object" && !Array.isArray(v);
    } catch {
      return false;
    }
  });
}

function systemOf(t: Turn): string {
  return t.messages[0]?.role === "system" ? t.messages[0].content : "";
}

function assertRefusal(e: unknown): void {
  const status = httpStatus(e);
  assert.ok(status !== undefined, `not a known error: ${(e as Error)?.stack ?? e}`);
  assert.ok(status >= 400 && status < 500, `status ${status}: ${(e as Error).message}`);
}

// ---------------------------------------------------------------------------------------------
// The properties

const POLICIES: Partial<LabelPolicy>[] = [
  {},
  { side: "train", drift: "mask" },
  { main: "mask", subagent: "drop", side: "mask", compaction: "drop", rewrite: "mask" },
  { main: "drop", retry: "drop", side: "train" },
];

async function checkRollout(
  rollout: Rollout,
  backend: InMemoryBackendTestDouble,
  queued: Completion[],
) {
  const done = rollout.turns.filter((t) => t.status === "done");

  // What the backend got and gave is what was recorded; nothing was generated twice.
  assert.equal(
    backend.requests.length,
    done.length +
      rollout.turns.filter((t) => t.status === "failed" && t.outputIds.length > 0).length,
  );
  backend.requests.forEach((r, k) => {
    const turn = rollout.turns.find((t) => t.id === r.turnId)!;
    assert.deepEqual(Array.from(r.promptIds), Array.from(promptIds(turn)));
    assert.deepEqual(Array.from(turn.outputIds), queued[k].output_ids);
    assert.deepEqual(turn.logprobs && Array.from(turn.logprobs), queued[k].logprobs ?? null);
  });

  // No two live turns for one request (of one client session: another session's identical
  // request is a fresh sample, a request naming no session is matched on content alone).
  const live = rollout.turns.filter((t) => t.status !== "failed");
  for (let i = 0; i < live.length; i++) {
    for (let j = i + 1; j < live.length; j++) {
      const a = live[i], b = live[j];
      const same = TurnTree.toolsKey(a.tools) === TurnTree.toolsKey(b.tools) &&
        a.messages.length === b.messages.length &&
        a.messages.every((m, k) => sameMessage(m, b.messages[k]));
      const replayable = b.session === null || b.session === a.session;
      assert.ok(!(same && replayable), `turns ${a.id} and ${b.id} record the same request`);
    }
  }

  // Prompts: the parent's exact ids (sampled ids verbatim), the bridge, the delta.
  for (const t of done) {
    const ids = Array.from(promptIds(t));
    assert.equal(ids.length, t.promptLength);
    if (t.parent) {
      const p = t.parent;
      const head = [...promptIds(p), ...p.outputIds];
      assert.deepEqual(ids.slice(0, head.length), head);
      assert.deepEqual(Array.from(t.bridgeIds), p.outputIds.at(-1) === EOT ? [] : [EOT]);
    } else {
      assert.deepEqual(Array.from(t.bridgeIds), []);
    }
  }

  // Special text: plain text in the split mode; else at a control id of the prompt.
  for (const t of done) {
    const ids = Array.from(promptIds(t));
    for (const h of t.specialText) {
      if (rollout.splitSpecialTokens) assert.equal(h.position, null);
      else if (h.position !== null) assert.equal(ids[h.position], model.idOf(h.token));
      assert.equal(t.messages[h.message].content.slice(h.offset).startsWith(h.token), true);
    }
  }

  // The shared-prefix export: every turn once; outputs partition the sampled positions.
  const sp = sharedPrefixTree(rollout);
  assert.deepEqual(sp.nodes.map((n) => n.turn), done.map((t) => t.id));
  assert.equal(sp.tokens.length, sp.sampled.length);
  assert.equal(sp.tokens.length, sp.logprobs.length);
  const owner = new Array<string | null>(sp.tokens.length).fill(null);
  let cursor = 0;
  sp.nodes.forEach((n, k) => {
    const t = done[k];
    assert.equal(n.context[0], cursor);
    assert.equal(n.context[1], n.output[0]);
    cursor = n.output[1];
    for (let i = n.output[0]; i < n.output[1]; i++) {
      assert.equal(owner[i], null, "a sampled position owned twice");
      owner[i] = t.id;
    }
    assert.deepEqual(sp.tokens.slice(...n.output), Array.from(t.outputIds));
    assert.deepEqual(
      sp.logprobs.slice(...n.output),
      t.logprobs ? Array.from(t.logprobs) : Array.from(t.outputIds, () => 0),
    );
    const parent = t.parent ? [...promptIds(t.parent), ...t.parent.outputIds] : [];
    assert.deepEqual([...parent, ...sp.tokens.slice(...n.context)], Array.from(promptIds(t)));
  });
  assert.equal(cursor, sp.tokens.length);
  for (let i = 0; i < sp.tokens.length; i++) {
    assert.equal(sp.sampled[i], owner[i] === null ? 0 : 1, `sampled flag at ${i}`);
    if (owner[i] === null) assert.equal(sp.logprobs[i], 0);
  }
  assert.equal(
    sp.sampled.reduce((a, b) => a + b, 0),
    done.reduce((n, t) => n + t.outputIds.length, 0),
  );

  for (const labels of POLICIES) await checkSamples(rollout, done, labels);
}

async function checkSamples(rollout: Rollout, done: Turn[], labels: Partial<LabelPolicy>) {
  const policy = { ...DEFAULT_LABEL_POLICY, ...labels };
  const samples = buildSamples(rollout, { labels });
  /** Per done turn: the samples that hold it as their own, and those that put loss on it. */
  const owners = new Map<Turn, number>(), trainedIn = new Map<Turn, number>();
  for (const s of samples) {
    const leaf = done.find((t) => t.id === s.turns.at(-1))!;
    const path = chainOf(leaf);
    assert.deepEqual(s.turns, path.map((t) => t.id));
    const chain = rollout.chains[leaf.chain];
    const label = chain.label;
    assert.equal(s.branch, label);
    assert.notEqual(policy[label], "drop");
    assert.deepEqual(s.input_ids, Int32Array.from([...promptIds(leaf), ...leaf.outputIds]));
    const n = s.input_ids.length;
    assert.deepEqual([s.loss_mask.length, s.logprobs.length, s.sft_mask.length], [n, n, n]);

    // The path: turns of the chains this one forked from, then the chain's own turns.
    const own = path.findIndex((t) => t.chain === leaf.chain);
    assert.ok(path.slice(own).every((t) => t.chain === leaf.chain), "own turns are a suffix");
    assert.equal(path[own], chain.root, "the own part starts at the chain's root");
    const first = path[own];
    assert.equal(
      s.trained_from,
      first.promptLength - first.bridgeIds.length - first.deltaIds.length,
    );
    if (own > 0) {
      assert.equal(first.parent!.chain, chain.parent, "a fork hangs off the chain it shares");
      assert.equal(s.parent?.turn, first.parent!.id);
    } else assert.equal(s.trained_from, 0);

    const loss = new Array(n).fill(0), logprobs = new Array(n).fill(0);
    const sampled = new Array(n).fill(false);
    for (const t of path) {
      const mine = t.chain === leaf.chain;
      if (mine) owners.set(t, (owners.get(t) ?? 0) + 1);
      const a = t.promptLength, b = a + t.outputIds.length;
      assert.deepEqual(Array.from(s.input_ids.slice(a, b)), Array.from(t.outputIds));
      const learn = mine && policy[label] === "train" && !(t.drift && policy.drift !== "train");
      if (learn && b > a) trainedIn.set(t, (trainedIn.get(t) ?? 0) + 1);
      for (let i = a; i < b; i++) {
        sampled[i] = true;
        loss[i] = learn ? 1 : 0;
        logprobs[i] = t.logprobs?.[i - a] ?? 0;
      }
    }
    assert.deepEqual(
      s.loss_mask,
      Uint8Array.from(loss),
      "loss_mask: 1 exactly on sampled ids of own trained turns",
    );
    assert.ok(
      s.loss_mask.slice(0, s.trained_from).every((x) => x === 0),
      "no loss before trained_from",
    );
    assert.deepEqual(
      s.logprobs,
      Float64Array.from(logprobs),
      "logprobs aligned with the sampled ids",
    );
    for (let i = 0; i < n; i++) {
      if (s.loss_mask[i] === 1) assert.ok(sampled[i]);
      if (s.logprobs[i] !== 0) assert.ok(sampled[i], "logprob on an id nobody sampled");
    }
    await checkSft(s.input_ids, s.sft_mask, sampled, path);
    checkSampleFacts(s, rollout.turns, true);
  }
  // The tree and calls forms expand to these samples exactly.
  const flat = samples.map(flatArrays);
  const json = (v: unknown) =>
    JSON.parse(
      JSON.stringify(v, (_k, x) => ArrayBuffer.isView(x) ? Array.from(x as Int32Array) : x),
    );
  const tree = json(treeExport(rollout.id, null, rollout.turns, samples, rollout.rows));
  assert.deepEqual(expandTree(tree), json(flat), "the tree form expands to the flat samples");
  const calls = json(callsExport(rollout.id, null, rollout.turns, samples, rollout.rows));
  assert.deepEqual(expandCalls(calls), json(flat), "the calls form expands to the flat samples");
  // Loss ownership: every sampled id has loss 1 in exactly one sample when its chain's label and
  // the drift policy train it, and in none otherwise; every turn is one sample's own, or dropped.
  for (const t of done) {
    const action = policy[rollout.chains[t.chain].label];
    assert.equal(owners.get(t) ?? 0, action === "drop" ? 0 : 1, `turn ${t.id} owned once`);
    const trains = action === "train" && !(t.drift && policy.drift !== "train") &&
      t.outputIds.length > 0;
    assert.equal(trainedIn.get(t) ?? 0, trains ? 1 : 0, `turn ${t.id}: samples with loss on it`);
  }
}

/**
 * Tool outputs rendered by a chain, in order (what each turn's delta or full render holds), as the
 * tokenizer sees them: lone surrogates become U+FFFD, text is NFC-normalized.
 */
function renderedToolOutputs(chain: Turn[]): string[] {
  return chain.flatMap((t) =>
    t.messages.slice(t.messages.length - t.renderedMessages).flatMap((m) =>
      m.role === "tool" ? [m.content.toWellFormed().normalize("NFC")] : []
    )
  );
}

async function checkSft(ids: Int32Array, sft: Uint8Array, sampled: boolean[], chain: Turn[]) {
  const runs: [number, number][] = [];
  for (let i = 0; i < sft.length; i++) {
    if (sft[i] !== 1) continue;
    assert.ok(!sampled[i], "sft_mask on a sampled id");
    assert.ok(!MARKERS.has(ids[i]), `sft_mask on template token ${ids[i]}`);
    const s = i;
    while (i < sft.length && sft[i] === 1) i++;
    runs.push([s, i]);
  }
  for (const [a, b] of runs) {
    assert.ok(ids[a - 1] === OPEN || (ids[a - 1] === NL && ids[a - 2] === OPEN), "run start");
    assert.ok(ids[b] === CLOSE || (ids[b] === NL && ids[b + 1] === CLOSE), "run end");
  }
  const outputs = renderedToolOutputs(chain);
  const texts = await Promise.all(runs.map(([a, b]) => model.decode(Array.from(ids.slice(a, b)))));
  // Every non-empty output has its run; an empty output has none (only scaffolding is there).
  const expected = outputs.filter((c) => c !== "");
  assert.equal(texts.length, expected.length, `sft runs ${JSON.stringify(texts)}`);
  texts.forEach((t, k) => {
    const c = expected[k];
    assert.ok(
      [c, "\n" + c, c + "\n", "\n" + c + "\n"].includes(t),
      `sft run ${JSON.stringify(t.slice(0, 200))} is not the output ${
        JSON.stringify(c.slice(0, 200))
      }`,
    );
  });
}

// ---------------------------------------------------------------------------------------------

/** The random sequences hand out what they did before issue 11's memory work (`golden.ts`). */
const golden = new GoldenDigests(new URL("./__fixtures__/golden.properties.json", import.meta.url));
const ONE = Deno.env.get("ROLLGATE_PROPERTY_SEED");
const RUNS = Number(Deno.env.get("ROLLGATE_PROPERTY_RUNS") ?? 40);
const SEEDS = ONE ? [Number(ONE)] : Array.from({ length: RUNS }, (_, i) => 1000 + i * 7919);

Deno.test("turn tree properties hold over random request sequences", async () => {
  const stats = {
    turns: 0,
    retries: 0,
    failed: 0,
    chains: new Map<string, number>(),
    drift: 0,
    specialText: 0,
  };
  for (const seed of SEEDS) {
    try {
      const { rollout, backend, queued } = await runSequence(seed, 30);
      await checkRollout(rollout, backend, queued);
      if (!ONE && !Deno.env.get("ROLLGATE_PROPERTY_RUNS")) {
        await golden.check(`sequence ${seed}`, handedOut(rollout));
      }
      stats.turns += rollout.turns.length;
      stats.failed += rollout.turns.filter((t) => t.status === "failed").length;
      stats.retries += rollout.turns.reduce((n, t) => n + t.retries, 0);
      stats.drift += rollout.turns.filter((t) => t.drift).length;
      stats.specialText += rollout.turns.reduce((n, t) => n + t.specialText.length, 0);
      for (const c of rollout.chains) {
        stats.chains.set(c.label, (stats.chains.get(c.label) ?? 0) + 1);
      }
    } catch (e) {
      (e as Error).message = `seed ${seed} (ROLLGATE_PROPERTY_SEED=${seed}): ${
        (e as Error).message
      }`;
      throw e;
    }
  }
  // The generator must actually exercise what the properties are about.
  console.log(JSON.stringify({ ...stats, chains: Object.fromEntries(stats.chains) }));
  if (!ONE) {
    assert.ok(stats.retries > 20, `retries ${stats.retries}`);
    assert.ok(stats.failed > 5, `refusals ${stats.failed}`);
    assert.ok(stats.drift > 5, `drift ${stats.drift}`);
    assert.ok(stats.specialText > 5, `special text ${stats.specialText}`);
    for (const label of ["main", "subagent", "compaction", "side", "rewrite", "retry"]) {
      assert.ok((stats.chains.get(label) ?? 0) > 5, `${label} chains: ${stats.chains.get(label)}`);
    }
  }
});
