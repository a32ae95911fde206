/**
 * A rollout primed with a long agent history, recorded turn by turn through a real `TurnRunner`
 * (the backend is the instant double), ready for one more turn to be measured.
 *
 * @module
 */
import type { CanonicalRequest, Message, ToolMessage } from "../canonical/mod.ts";
import type { PolicyModel } from "../model/mod.ts";
import {
  type MessageNode,
  type Rollout,
  type RolloutStore,
  type TurnRunner,
  TurnTree,
} from "../trajectory/mod.ts";
import {
  type AgentStep,
  agentSteps,
  pytestOutput,
  rng,
  sampledText,
  SYSTEM_PROMPT,
  TASK,
  TOOLS,
} from "./agent_history.ts";
import type { InstantBackend } from "./instant_backend.ts";

/** The tool result every measured turn appends; `#` is replaced by a counter. */
const NEW_OUTPUT = pytestOutput(rng(424242), 16, "(run #) ");

/** A fresh tool result for the primed history's last call, unique per `n`. */
export function newToolResult(toolCallId: string, n: number): ToolMessage {
  return { role: "tool", tool_call_id: toolCallId, content: NEW_OUTPUT.replace("#", String(n)) };
}

let runs = 0;

/**
 * A tool result no earlier call in this process produced, so a measured turn tokenizes it for
 * real: the segment cache is shared by every rollout of a model, and per-bench counters would
 * hand a later group (32k, 128k, HTTP) the text an earlier group (1k) already put in the cache.
 */
export function freshToolResult(toolCallId: string): ToolMessage {
  return newToolResult(toolCallId, ++runs);
}

/** What the policy "samples" in every measured turn. */
export const MEASURED_STEP: Pick<AgentStep, "reasoning" | "tool" | "args"> = {
  reasoning: "The focused test passes now. Run the whole module to check nothing else broke.",
  tool: "bash",
  args: { command: "python -m pytest -q tests/test_config_loader.py", timeout: 600 },
};

/** `MEASURED_STEP` as the Qwen3 text the policy samples. */
export const MEASURED_OUTPUT = sampledText(MEASURED_STEP);

export function chatRequest(messages: Message[]): CanonicalRequest {
  return {
    protocol: "chat",
    model: "rollgate-policy",
    messages,
    tools: TOOLS,
    sampling: {},
    stream: false,
  };
}

/**
 * A function that puts the rollout back into its current state after measured turns were
 * recorded below `anchor` (the last primed answer): their tree nodes, turns, chains and chain heads
 * (with their continuations) go.
 * Without it every measured turn would add a sibling below `anchor`, so later iterations would
 * match against a growing list of siblings and measure a different state.
 */
export function resetter(rollout: Rollout, anchor: MessageNode): () => void {
  const children = anchor.children.length, turns = rollout.turns.length;
  const chains = rollout.chains.length, latest = rollout.chains.map((c) => c.latest);
  const next = latest.map((t) => t.next);
  return () => {
    anchor.children.length = children;
    rollout.turns.length = turns;
    rollout.chains.length = chains;
    latest.forEach((t, i) => {
      rollout.chains[i].latest = t;
      t.next = next[i];
    });
  };
}

/**
 * Decides when a primed history is big enough: at the first loop that gets the measured prompt
 * within half a loop of the target (so a small target is not overshot by a whole loop).
 */
export class SizeGoal {
  #first = -1;
  #loops = 0;
  constructor(readonly target: number) {}

  /** `tokens`: the measured prompt size if priming stopped now. */
  reached(tokens: number): boolean {
    if (this.#first < 0) this.#first = tokens;
    else this.#loops++;
    const halfLoop = this.#loops === 0 ? 0 : (tokens - this.#first) / this.#loops / 2;
    return tokens + halfLoop >= this.target;
  }
}

export interface PrimedRollout {
  rollout: Rollout;
  /**
   * The recorded history, ending with the last sampled assistant message; a deep copy (fresh
   * strings, as after `JSON.parse` of a request) so matching compares contents for real.
   */
  history: Message[];
  /** Id of the tool call the next tool result answers. */
  lastCallId: string;
  /** Prompt tokens of a measured turn (history + one new tool result + generation prompt). */
  promptTokens: number;
  /** Resets the rollout to its primed state (drops measured turns and their tree nodes). */
  reset(): void;
}

/** A measured turn's messages: the primed history plus a tool result no turn has seen yet. */
export function nextMessages(primed: PrimedRollout): Message[] {
  return [...primed.history, freshToolResult(primed.lastCallId)];
}

/** Registers the "delta turn" bench: one uncached turn extending the primed rollout, then undone. */
export function benchDeltaTurn(
  name: string,
  group: string,
  runner: TurnRunner,
  primed: PrimedRollout,
): void {
  Deno.bench({
    name,
    group,
    baseline: true,
    async fn(b) {
      const req = chatRequest(nextMessages(primed));
      b.start();
      const turn = await runner.start(primed.rollout, req, "call_");
      await turn.result;
      b.end();
      primed.reset();
      if (turn.mount !== "extend") throw new Error(`turn mounted as ${turn.mount}`);
    },
  });
}

export interface PrimeOptions {
  id: string;
  /** Size of the measured turn's prompt in tokens (see {@linkcode SizeGoal}). */
  targetTokens: number;
  /** Line count range of the tool outputs in the history. */
  lines: [number, number];
  seed: number;
  /** The ids the policy samples for a step (default: its Qwen3 text, tokenized). */
  answerIds?: (step: AgentStep) => Promise<number[]>;
}

/** Plays an agent against `runner` until the history reaches the target size. */
export async function primeRollout(
  model: PolicyModel,
  runner: TurnRunner,
  backend: InstantBackend,
  store: RolloutStore,
  o: PrimeOptions,
): Promise<PrimedRollout> {
  const rollout = store.create({ id: o.id });
  const newToolTokens = (await model.renderDeltaIds([newToolResult("call_x", 0)])).ids.length;
  const steps = agentSteps(o.seed, o.lines);
  const answerIds = o.answerIds ?? ((step) => model.tokenizer.encode(sampledText(step)));
  const history: Message[] = [SYSTEM_PROMPT, TASK];
  const goal = new SizeGoal(o.targetTokens);
  for (;;) {
    const step = steps.next().value!;
    backend.answerWith(await answerIds(step));
    const turn = await runner.start(rollout, chatRequest([...history]), "call_");
    const answer = await turn.result;
    const expected = rollout.turns.length === 1 ? "root" : "extend";
    if (turn.mount !== expected) {
      throw new Error(`priming ${o.id}: turn ${turn.index} mounted as ${turn.mount}`);
    }
    const call = answer.message.tool_calls?.[0];
    if (!call) throw new Error(`priming ${o.id}: the sampled turn has no tool call`);
    history.push(structuredClone(answer.message));
    const promptTokens = turn.promptLength + turn.outputIds.length + newToolTokens;
    if (goal.reached(promptTokens)) {
      const anchor: MessageNode =
        rollout.tree.mount(history, TurnTree.rootKey({ protocol: "chat", tools: TOOLS })).node;
      if (anchor.message?.role !== "assistant") {
        throw new Error("primed history must end in a turn");
      }
      return {
        rollout,
        history: JSON.parse(JSON.stringify(history)),
        lastCallId: call.id,
        promptTokens,
        reset: resetter(rollout, anchor),
      };
    }
    history.push({ role: "tool", tool_call_id: call.id, content: step.output });
  }
}
