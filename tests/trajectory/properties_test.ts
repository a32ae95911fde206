/**
 * Property tests of the turn tree, model-based on fast-check: random sequences of agent requests
 * (commands) against the real `RolloutActions` and its `TurnRunner` (real Qwen3 tokenizer and
 * template; generation by the in-memory backend TEST DOUBLE). The model is what the clients hold
 * (each agent's history, its last answer, the sub-agent calls still open); the real system is the
 * façade and its rollout. Agents extend their history with the recorded answer (tool arguments
 * re-serialised, keys reordered, null members added), re-send identical requests (one at a time
 * and concurrently), rewrite, re-encode or compact their history, open a second session, fire
 * side requests, spawn sub-agents from `Agent` calls, and send malformed histories (odd role
 * order, empty contents, results without calls, unicode, lone surrogates, huge strings,
 * special-token text in split-mode rollouts). The policy's outputs are random too: answers, parallel tool calls, non-canonical
 * formats (drift), malformed calls, truncated outputs, missing end-of-turn ids, missing logprobs.
 * Every generation also sends MoE routing rows (`routed_experts`) from where its chain's rows end,
 * as an SGLang engine would.
 *
 * Each command checks what it did as it runs (a retry generates nothing, a fork carries its
 * label and evidence, …); after every sequence `rollout_properties.ts` checks the rollout as a
 * whole for several label policies (loss ownership, masks, the shared-prefix export, each
 * sample's turn spans and routing rows position by position, the tree and calls forms against the
 * flat samples).
 *
 * A failure prints fast-check's seed and path and the shrunk command list. Replay it with
 * `ROLLGATE_PROPERTY_SEED=<seed> ROLLGATE_PROPERTY_PATH=<path>`; `ROLLGATE_PROPERTY_RUNS` runs
 * more sequences. The default seed's sequences hand out what they did when recorded
 * (`__fixtures__/golden.properties.json`, `tests/support/golden.ts`).
 *
 * @module
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { httpStatus } from "../../gateway/mod.ts";
import type { Completion } from "../../generation/mod.ts";
import type { AssistantMessage, CanonicalRequest, Message } from "../../canonical/mod.ts";
import { type Rollout, RolloutActions, type Turn } from "../../trajectory/mod.ts";
import { InMemoryBackendTestDouble } from "../support/in_memory_backend.ts";
import { GoldenDigests, handedOut } from "../support/golden.ts";
import {
  type Agent,
  completion,
  Draw,
  echo,
  generation,
  huge,
  MAIN_TOOLS,
  malformed,
  model,
  reencodable,
  request,
  SUB_TOOLS,
  SYSTEM_MAIN,
  SYSTEM_SIDES,
  SYSTEM_SUB,
  systemOf,
  text,
} from "./property_generators.ts";
import { checkRollout } from "./rollout_properties.ts";

/** What the clients hold: the model of the sequence. */
interface Clients {
  agents: Agent[];
  /** Agent calls whose result the caller has not sent, by id: the call's agent. */
  open: Map<string, { agent: Agent; prompt: string; spawned?: Agent }>;
  /** The first agent's client session, when it names one. */
  session?: string;
  sessions: number;
  /** Commands run so far (makes texts of later commands unique). */
  step: number;
}

/** The system under test: turns start through the façade, as the gateway starts them. */
class Gateway {
  /** Every completion carries MoE routing rows. */
  readonly backend = new InMemoryBackendTestDouble({ routing: { layers: 2, topK: 3 } });
  readonly rollouts = new RolloutActions({ model, backend: this.backend });
  readonly queued: Completion[] = [];
  rollout!: Rollout;

  static async open(id: string, splitSpecialTokens: boolean): Promise<Gateway> {
    const gw = new Gateway();
    gw.rollout = await gw.rollouts.create({ id, token: "tok", splitSpecialTokens });
    return gw;
  }

  /** Queues what the policy will sample for the next generation. */
  async enqueue(g: Draw): Promise<void> {
    const c = await completion(g);
    this.queued.push(c);
    this.backend.enqueue(c);
  }

  /** Starts a request; a refusal must be a domain error the gateway answers with a 4xx. */
  async start(g: Draw, req: CanonicalRequest): Promise<Turn | null> {
    await this.enqueue(g);
    try {
      const turn = await this.rollouts.startTurn(this.rollout, req, "call_");
      await settle(turn);
      return turn;
    } catch (e) {
      assertRefusal(e);
      return null;
    }
  }
}

async function settle(turn: Turn): Promise<void> {
  try {
    await turn.result;
  } catch (e) {
    assertRefusal(e);
  }
}

function assertRefusal(e: unknown): void {
  const status = httpStatus(e);
  assert.ok(status !== undefined, `not a known error: ${(e as Error)?.stack ?? e}`);
  assert.ok(status >= 400 && status < 500, `status ${status}: ${(e as Error).message}`);
}

/** What the client keeps of a request it sent and the turn it made (or not). */
function remember(m: Clients, agent: Agent, req: CanonicalRequest, turn: Turn | null): void {
  agent.messages = req.messages;
  agent.failed = turn?.status === "done" ? undefined : req;
  if (turn && turn.status === "done") {
    agent.last = { req, turn };
    for (const c of turn.message!.tool_calls ?? []) {
      if (c.name !== "Agent" || agent.system === SYSTEM_SUB) continue;
      const prompt = JSON.parse(c.arguments).prompt;
      if (typeof prompt === "string") m.open.set(c.id, { agent, prompt });
    }
  } else agent.last = undefined;
}

/** A new agent's first request: a new chain, labelled `expectLabel`. */
async function newAgent(
  m: Clients,
  r: Gateway,
  g: Draw,
  agent: Agent,
  expectLabel: string | null,
  extra?: (t: Turn) => void,
): Promise<void> {
  const req = request(agent.messages, agent.tools, agent.session);
  const turn = await r.start(g, req);
  if (turn) {
    assert.notEqual(turn.mount, "extend");
    if (expectLabel) assert.equal(r.rollout.chains[turn.chain].label, expectLabel, "label");
    extra?.(turn);
  }
  m.agents.push(agent);
  remember(m, agent, req, turn);
}

const ready = (m: Clients) => m.agents.filter((a) => a.last);
const spawnable = (m: Clients) => [...m.open.entries()].filter(([, o]) => !o.spawned);

/** One command: its name, when it applies, and what it does (with its own checks). */
abstract class Step implements fc.AsyncCommand<Clients, Gateway> {
  constructor(readonly draws: readonly number[]) {}
  abstract check(m: Readonly<Clients>): boolean;
  abstract act(m: Clients, r: Gateway, g: Draw): Promise<void>;
  async run(m: Clients, r: Gateway): Promise<void> {
    await this.act(m, r, new Draw(this.draws));
    m.step++;
  }
  toString(): string {
    return `${this.constructor.name}(${this.draws.slice(0, 4).join(",")}…)`;
  }
}

/** The agent sends its history with the last answer and its tool results (or a new message). */
class Extend extends Step {
  check(m: Readonly<Clients>): boolean {
    return ready(m as Clients).length > 0;
  }
  async act(m: Clients, r: Gateway, g: Draw, concurrent = false): Promise<void> {
    const { rollout, rollouts } = r;
    const agent = g.pick(ready(m));
    const base = agent.last!.turn;
    const answer = base.message!;
    const tail: Message[] = [];
    const closing: { id: string; sub?: Agent }[] = [];
    for (const c of answer.tool_calls ?? []) {
      const o = m.open.get(c.id);
      const report = o?.spawned?.last?.turn.message?.content;
      const output = report ?? (g.chance(0.04) ? huge(g) : text(g));
      tail.push({ role: "tool", content: output, tool_call_id: c.id });
      if (o) closing.push({ id: c.id, sub: o.spawned });
    }
    if (!tail.length || g.chance(0.2)) tail.push({ role: "user", content: text(g) || "next" });
    const req = request([...agent.messages, echo(g, answer), ...tail], agent.tools, agent.session);
    let turn: Turn | null;
    if (concurrent) {
      // The same request twice before the first is answered: one turn.
      await r.enqueue(g);
      const before = rollout.turns.length;
      const both = await Promise.allSettled([
        rollouts.startTurn(rollout, req, "call_"),
        rollouts.startTurn(rollout, structuredClone(req), "call_"),
      ]);
      assert.ok(rollout.turns.length <= before + 1, "two turns for one concurrent request");
      const got = both.flatMap((s) => s.status === "fulfilled" ? [s.value] : []);
      both.forEach((s) => s.status === "rejected" && assertRefusal(s.reason));
      for (const t of got) await settle(t);
      if (got.length === 2) assert.equal(got[0], got[1]);
      turn = got[0] ?? null;
      if (turn) assert.equal(turn.retries, 1);
    } else {
      turn = await r.start(g, req);
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
      m.open.delete(c.id);
      if (c.sub?.last) {
        const chain = rollout.chains[c.sub.last.turn.chain];
        assert.equal(chain.evidence.closed_by_turn, carrier.id);
      }
    }
    remember(m, agent, req, turn);
  }
}

/** The same extension sent twice at once. */
class Concurrent extends Extend {
  override act(m: Clients, r: Gateway, g: Draw): Promise<void> {
    return super.act(m, r, g, true);
  }
}

/** A client retry of the last request: the recorded turn comes back, nothing is generated. */
class Retry extends Step {
  check(m: Readonly<Clients>): boolean {
    return ready(m as Clients).length > 0;
  }
  async act(m: Clients, r: Gateway, g: Draw): Promise<void> {
    const { req, turn } = g.pick(ready(m)).last!;
    const before = { turns: r.rollout.turns.length, calls: r.backend.requests.length };
    const retries = turn.retries;
    const again = await r.rollouts.startTurn(r.rollout, structuredClone(req), "call_");
    assert.equal(again, turn, "a retry gets the recorded turn back");
    assert.equal(turn.retries, retries + 1);
    assert.deepEqual(
      { turns: r.rollout.turns.length, calls: r.backend.requests.length },
      before,
      "a retry records nothing and generates nothing",
    );
    assert.deepEqual(await again.result, turn.answer);
  }
}

/** A refused request sent again is not a retry of the failed turn: it is tried again. */
class ResendFailed extends Step {
  check(m: Readonly<Clients>): boolean {
    return m.agents.some((a) => a.failed);
  }
  async act(m: Clients, r: Gateway, g: Draw): Promise<void> {
    const agent = g.pick(m.agents.filter((a) => a.failed));
    const before = r.rollout.turns.length;
    const turn = await r.start(g, structuredClone(agent.failed!));
    assert.equal(r.rollout.turns.length, before + 1);
    assert.equal(turn, null, "refused again");
    assert.equal(r.rollout.turns.at(-1)!.status, "failed");
  }
}

/** The client cuts its history and sends an edited message: a rewrite or compaction chain. */
class Rewrite extends Step {
  check(m: Readonly<Clients>): boolean {
    return m.agents.some((a) => a.messages.length > 2);
  }
  async act(m: Clients, r: Gateway, g: Draw): Promise<void> {
    const { rollout } = r;
    const source = g.pick(m.agents.filter((a) => a.messages.length > 2));
    const cut = 2 + g.int(source.messages.length - 2);
    const kept = source.messages.slice(0, cut);
    const messages: Message[] = [...kept, { role: "user", content: `edited: ${text(g)}` }];
    const agent: Agent = { ...source, messages, last: undefined };
    const req = request(messages, agent.tools, agent.session);
    const turn = await r.start(g, req);
    const label = turn && rollout.chains[turn.chain].label;
    if (turn && turn.mount !== "extend") {
      if (label === "rewrite") {
        // The kept history replaced a recorded turn's answer (an earlier re-encoding).
        const replaced = rollout.turns.find((t) =>
          t.id === rollout.chains[turn.chain].evidence.replaced_turn
        )!;
        assert.equal(messages[replaced.messages.length].role, "assistant");
      } else assert.equal(label, source.kind === "side" ? "side" : "compaction", "rewrite label");
    } else if (turn && rollout.chains[turn.chain].root === turn) {
      // Extends a recorded turn that its chain already continued: a labelled fork.
      assert.equal(label, source.kind === "side" ? "side" : "rewrite", "fork label");
      const evidence = rollout.chains[turn.chain].evidence;
      assert.equal(evidence.base_turn, turn.parent!.id);
      assert.ok((evidence.message_index as number) >= turn.parent!.messages.length);
    }
    m.agents.push(agent);
    remember(m, agent, req, turn);
  }
}

/**
 * The client re-encodes a recorded tool call (as Claude Code decodes `\uXXXX` text) and sends the
 * rest of its history unchanged: the chain forks after the turn before it.
 */
class Reencode extends Step {
  check(m: Readonly<Clients>): boolean {
    return m.agents.some((a) => reencodable(a) >= 0);
  }
  async act(m: Clients, r: Gateway, g: Draw): Promise<void> {
    const source = g.pick(m.agents.filter((a) => reencodable(a) >= 0));
    const at = reencodable(source);
    const messages = structuredClone(source.messages);
    const msg = messages[at] as AssistantMessage;
    const args = JSON.parse(msg.tool_calls![0].arguments);
    // A value no earlier re-encoding used, so the history is new.
    const value = `\u00e9 #${m.step}`;
    msg.tool_calls![0].arguments = JSON.stringify({ ...args, reencoded: value });
    const agent: Agent = { ...source, messages, last: undefined };
    const req = request(messages, agent.tools, agent.session);
    const turn = await r.start(g, req);
    if (turn) {
      const chain = r.rollout.chains[turn.chain];
      assert.equal(chain.root, turn, "a re-encoded history starts a chain");
      assert.equal(chain.label, source.kind === "side" ? "side" : "rewrite");
      if (turn.mount === "extend") {
        assert.equal(chain.parent, turn.parent!.chain);
        assert.equal(chain.evidence.message_index, at);
        assert.equal(chain.evidence.path, "tool_calls[0].arguments.reencoded");
        assert.equal(chain.evidence.received, value);
      }
    }
    m.agents.push(agent);
    remember(m, agent, req, turn);
  }
}

/**
 * Another run of the CLI in the same rollout, whose first request equals the first run's: a fresh
 * sample of the same prompt, not a replay of the first run's answer.
 */
class SecondSession extends Step {
  check(m: Readonly<Clients>): boolean {
    return m.session !== undefined;
  }
  async act(m: Clients, r: Gateway, g: Draw): Promise<void> {
    const { rollout, backend } = r;
    const messages = structuredClone(rollout.turns[0].messages);
    const agent: Agent = {
      ...m.agents[0],
      session: `session-${++m.sessions}`,
      messages,
      last: undefined,
    };
    const before = backend.requests.length;
    const req = request(messages, agent.tools, agent.session);
    const turn = await r.start(g, req);
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
    m.agents.push(agent);
    remember(m, agent, req, turn);
  }
}

/** The main agent starts over from a summary: a compaction chain under the main one. */
class Compaction extends Step {
  check(): boolean {
    return true;
  }
  async act(m: Clients, r: Gateway, g: Draw): Promise<void> {
    const summary = `Summary of the conversation so far: ${text(g)} (#${m.step})`;
    await newAgent(
      m,
      r,
      g,
      {
        kind: "main",
        system: SYSTEM_MAIN,
        tools: MAIN_TOOLS,
        messages: [{ role: "system", content: SYSTEM_MAIN }, { role: "user", content: summary }],
      },
      "compaction",
      (t) => {
        const chain = r.rollout.chains[t.chain];
        assert.equal(systemOf(r.rollout.chains[chain.parent!].root), SYSTEM_MAIN);
      },
    );
  }
}

/** A tool-less side request under another system prompt (a title, a summary). */
class Side extends Step {
  check(): boolean {
    return true;
  }
  async act(m: Clients, r: Gateway, g: Draw): Promise<void> {
    const system = g.pick(SYSTEM_SIDES);
    await newAgent(m, r, g, {
      kind: "side",
      system,
      tools: [],
      messages: [{ role: "system", content: system }, {
        role: "user",
        content: `${text(g)} (side ${m.step})`,
      }],
    }, "side");
  }
}

/** A sub-agent starts on an open `Agent` call's prompt. */
class Subagent extends Step {
  check(m: Readonly<Clients>): boolean {
    return spawnable(m as Clients).length > 0;
  }
  async act(m: Clients, r: Gateway, g: Draw): Promise<void> {
    const [callId, o] = g.pick(spawnable(m));
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
    await newAgent(m, r, g, agent, "subagent", (t) => {
      const chain = r.rollout.chains[t.chain];
      assert.equal(chain.evidence.tool_call_id, callId);
      assert.equal(chain.evidence.prompt_matched, true);
      assert.equal(chain.parent, o.agent.last?.turn.chain ?? chain.parent);
    });
  }
}

/** A history no agent would send, but a buggy client might: refused with a 4xx, or served. */
class Malformed extends Step {
  check(): boolean {
    return true;
  }
  async act(_m: Clients, r: Gateway, g: Draw): Promise<void> {
    await r.start(g, malformed(g));
  }
}

const draws = fc.array(fc.integer({ min: 0, max: 2 ** 31 - 1 }), { minLength: 24, maxLength: 24 });
const step = <S extends Step>(make: new (d: readonly number[]) => S) =>
  draws.map((d) => new make(d));
/** Commands, each as often as it should come up when it applies. */
const STEPS = [
  ...Array(8).fill(step(Extend)),
  ...Array(5).fill(step(Subagent)),
  ...Array(2).fill(step(Retry)),
  ...Array(2).fill(step(Rewrite)),
  ...Array(2).fill(step(Reencode)),
  ...Array(2).fill(step(Malformed)),
  step(Concurrent),
  step(SecondSession),
  step(Compaction),
  step(Side),
  step(ResendFailed),
] as fc.Arbitrary<fc.AsyncCommand<Clients, Gateway>>[];

/** A sequence: how the rollout starts (split mode, a named session, the task) and its commands. */
const SEQUENCE = fc.record({
  splitSpecialTokens: fc.boolean(),
  namedSession: fc.boolean(),
  first: draws,
  commands: fc.commands(STEPS, { maxCommands: 30, size: "max" }),
});

type Sequence = typeof SEQUENCE extends fc.Arbitrary<infer T> ? T : never;

/** Runs one sequence and checks the rollout it leaves; returns it. */
async function runSequence(s: Sequence, id: number): Promise<Rollout> {
  generation.promptCounter = 0;
  generation.specialPieces = s.splitSpecialTokens;
  const real = await Gateway.open(`p${id}`, s.splitSpecialTokens);
  const { rollout } = real;
  const session = s.namedSession ? "session-1" : undefined;
  const clients: Clients = { agents: [], open: new Map(), session, sessions: 1, step: 0 };
  // The main agent starts the rollout.
  const g = new Draw(s.first);
  await newAgent(clients, real, g, {
    kind: "main",
    session,
    system: SYSTEM_MAIN,
    tools: MAIN_TOOLS,
    messages: [{ role: "system", content: SYSTEM_MAIN }, {
      role: "user",
      content: text(g) || "go",
    }],
  }, "main");
  await fc.asyncModelRun(() => ({ model: clients, real }), s.commands);
  await checkRollout(rollout, real.backend, real.queued);
  return rollout;
}

/** The default seed's sequences hand out what they did when recorded (`golden.ts`). */
const golden = new GoldenDigests(new URL("./__fixtures__/golden.properties.json", import.meta.url));
const SEED = Number(Deno.env.get("ROLLGATE_PROPERTY_SEED") ?? 1000);
const PATH = Deno.env.get("ROLLGATE_PROPERTY_PATH");
const RUNS = Number(Deno.env.get("ROLLGATE_PROPERTY_RUNS") ?? 40);
const DEFAULT = !Deno.env.has("ROLLGATE_PROPERTY_SEED") && !Deno.env.has("ROLLGATE_PROPERTY_RUNS");

Deno.test("turn tree properties hold over random request sequences (fast-check, model-based)", async () => {
  const stats = {
    sequences: 0,
    turns: 0,
    retries: 0,
    failed: 0,
    chains: new Map<string, number>(),
    drift: 0,
    specialText: 0,
    routedSamples: 0,
  };
  const handed: unknown[] = [];
  await fc.assert(
    fc.asyncProperty(SEQUENCE, async (s) => {
      const rollout = await runSequence(s, stats.sequences);
      handed.push(handedOut(rollout));
      stats.sequences++;
      stats.turns += rollout.turns.length;
      stats.failed += rollout.turns.filter((t) => t.status === "failed").length;
      stats.retries += rollout.turns.reduce((n, t) => n + t.retries, 0);
      stats.drift += rollout.turns.filter((t) => t.drift).length;
      stats.specialText += rollout.turns.reduce((n, t) => n + t.specialText.length, 0);
      stats.routedSamples += rollout.samples().filter((x) => x.routed_experts).length;
      for (const c of rollout.chains) {
        stats.chains.set(c.label, (stats.chains.get(c.label) ?? 0) + 1);
      }
    }),
    { seed: SEED, numRuns: PATH ? 1 : RUNS, ...(PATH ? { path: PATH } : {}), endOnFailure: false },
  );
  // Runs without a failure are the sequences in order: their digests are the golden ones.
  if (DEFAULT && !PATH) handed.forEach((h, k) => golden.check(`sequence ${k}`, h));
  // The generator must actually exercise what the properties are about.
  console.log(JSON.stringify({ ...stats, chains: Object.fromEntries(stats.chains) }));
  if (DEFAULT) {
    assert.ok(stats.retries > 20, `retries ${stats.retries}`);
    assert.ok(stats.failed > 5, `refusals ${stats.failed}`);
    assert.ok(stats.drift > 5, `drift ${stats.drift}`);
    assert.ok(stats.specialText > 5, `special text ${stats.specialText}`);
    assert.ok(stats.routedSamples > 20, `samples with routing rows ${stats.routedSamples}`);
    for (const label of ["main", "subagent", "compaction", "side", "rewrite", "retry"]) {
      assert.ok((stats.chains.get(label) ?? 0) > 5, `${label} chains: ${stats.chains.get(label)}`);
    }
  }
});
