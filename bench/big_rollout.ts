/**
 * The 1M-token rollout of the tree and viewer benches: 200 turns holding ~1M distinct token ids
 * (long tool outputs of ~5k tokens each): a main line of 50 tool-call turns and 5 branches forked
 * from it at different depths, 30 turns each. Built with the real Qwen3 tokenizer and template
 * and the in-memory backend TEST DOUBLE.
 *
 * @module
 */
import type { AssistantMessage, CanonicalRequest, Message, ToolSpec } from "../canonical/mod.ts";
import type { PolicyModel } from "../model/mod.ts";
import { type Rollout, type Turn, TurnRunner } from "../trajectory/mod.ts";
import { InMemoryBackendTestDouble } from "../tests/support/in_memory_backend.ts";

const MAIN_TURNS = 50;
const FORKS = [8, 17, 26, 35, 44];
const FORK_TURNS = 30;
const OUTPUT_LINES = 104; // ≈ 5k tokens per tool output

export const TOOLS: ToolSpec[] = [{
  name: "bash",
  kind: "function",
  description: "Run a shell command.",
  parameters: {
    type: "object",
    properties: { command: { type: "string" } },
    required: ["command"],
  },
}];
const SYSTEM: Message = { role: "system", content: "You are a coding agent in /workspace/repo." };
const TASK: Message = { role: "user", content: "Fix the failing test in tests/test_cache.py." };

/** Code-like tool output, distinct per (branch, turn): no segment-cache hits between turns. */
export function toolOutput(branch: number, turn: number, lines = OUTPUT_LINES): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const n = (branch * 7919 + turn * 104729 + i * 31) % 99991;
    out.push(
      `src/pkg_${branch}/mod_${turn}.py:${i + 1}:    value_${n} = compute_${i % 17}` +
        `(items[${n % 113}], key="k${n}")  # cache ${n.toString(16)}`,
    );
  }
  return out.join("\n");
}

export function request(messages: Message[]): CanonicalRequest {
  return { protocol: "chat", model: "policy", messages, tools: TOOLS, sampling: {}, stream: false };
}

export interface BigRollout {
  runner: TurnRunner;
  backend: InMemoryBackendTestDouble;
  /** The main line's turns. */
  main: Turn[];
  /** The turns of the chain with the longest prompt. */
  deepest: Turn[];
  /** Queues the next scripted answer: one bash tool call. */
  scriptCall(command: string): Promise<void>;
}

/** Plays the 200 turns into `rollout`; `model` needs a context of at least 512k ids. */
export async function buildBigRollout(model: PolicyModel, rollout: Rollout): Promise<BigRollout> {
  const backend = new InMemoryBackendTestDouble();
  const runner = new TurnRunner(model, backend);

  async function scriptCall(command: string): Promise<void> {
    const text = `<think>\nInspect the next module.\n</think>\n\n<tool_call>\n` +
      `{"name": "bash", "arguments": {"command": ${
        JSON.stringify(command)
      }}}\n</tool_call><|im_end|>`;
    const ids = await model.tokenizer.encode(text);
    // Logprobs vary, so the viewer's heat shade has something to show.
    const logprobs = ids.map((_, i) => -((i * 37) % 100) / 25);
    backend.enqueue({ output_ids: ids, logprobs, finish_reason: "stop" });
  }

  /** Runs `count` tool-call turns from `messages`, returning the history after the last answer. */
  async function loop(
    messages: Message[],
    branch: number,
    count: number,
  ): Promise<{ messages: Message[]; turns: Turn[] }> {
    const turns: Turn[] = [];
    for (let k = 0; k < count; k++) {
      await scriptCall(`cat src/pkg_${branch}/mod_${k}.py`);
      const turn = await runner.start(rollout, request(messages), "call_");
      await turn.result;
      turns.push(turn);
      const answer = turn.message as AssistantMessage;
      messages = [
        ...messages,
        answer,
        { role: "tool", content: toolOutput(branch, k), tool_call_id: answer.tool_calls![0].id },
      ];
    }
    return { messages, turns };
  }

  const main = await loop([SYSTEM, TASK], 0, MAIN_TURNS);
  let deepest = main;
  for (const [f, depth] of FORKS.entries()) {
    // A fork: the history up to main turn `depth`'s answer, then a different tool output.
    const answer = main.turns[depth].message!;
    const history: Message[] = [
      ...main.turns[depth].messages,
      answer,
      {
        role: "tool",
        content: toolOutput(100 + f, depth),
        tool_call_id: answer.tool_calls![0].id,
      },
    ];
    const fork = await loop(history, f + 1, FORK_TURNS);
    if (fork.turns.at(-1)!.promptLength > deepest.turns.at(-1)!.promptLength) deepest = fork;
  }
  return { runner, backend, main: main.turns, deepest: deepest.turns, scriptCall };
}
