/**
 * The turn tree at scale: a rollout of 200 turns holding ~1M distinct token ids (long tool
 * outputs of ~5k tokens each): a main line of 50 tool-call turns and 5 branches forked from it
 * at different depths, 30 turns each. Built once with the real Qwen3 tokenizer and template and
 * the in-memory backend TEST DOUBLE; then measured:
 *
 * - mounting one new turn (history matching alone; + the delta render; the whole turn through
 *   `TurnRunner.start`, undone after each iteration so the tree stays the same size);
 * - linearizing the tree (`buildSamples`, `sharedPrefixTree`) and exporting it (`turnTree`).
 *
 *     deno bench -A bench/tree_bench.ts
 *
 * @module
 */
import type { AssistantMessage, CanonicalRequest, Message, ToolSpec } from "../canonical/mod.ts";
import { PolicyModel } from "../model/mod.ts";
import {
  buildSamples,
  Rollout,
  sharedPrefixTree,
  type Turn,
  TurnRunner,
  TurnTree,
  turnTree,
} from "../trajectory/mod.ts";
import { InMemoryBackendTestDouble } from "../tests/support/in_memory_backend.ts";

const MAIN_TURNS = 50;
const FORKS = [8, 17, 26, 35, 44];
const FORK_TURNS = 30;
const OUTPUT_LINES = 104; // ≈ 5k tokens per tool output

/** A roomy context: the deepest chain holds ~250k ids. */
const model = await PolicyModel.load({ contextLength: 1 << 20 });
const backend = new InMemoryBackendTestDouble();
const runner = new TurnRunner(model, backend);
const rollout = new Rollout("bench", "tok", {}, {});
const TOOLS: ToolSpec[] = [{
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
function toolOutput(branch: number, turn: number, lines = OUTPUT_LINES): string {
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

async function scriptCall(command: string): Promise<void> {
  const text = `<think>\nInspect the next module.\n</think>\n\n<tool_call>\n` +
    `{"name": "bash", "arguments": {"command": ${
      JSON.stringify(command)
    }}}\n</tool_call><|im_end|>`;
  const ids = await model.tokenizer.encode(text);
  backend.enqueue({ output_ids: ids, logprobs: ids.map(() => -0.1), finish_reason: "stop" });
}

function request(messages: Message[]): CanonicalRequest {
  return { protocol: "chat", model: "policy", messages, tools: TOOLS, sampling: {}, stream: false };
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

const built = performance.now();
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
const spt = sharedPrefixTree(rollout);
const samples = buildSamples(rollout);
const exported = JSON.stringify(turnTree(rollout));
console.log(
  `tree: ${rollout.turns.length} turns, ${spt.tokens.length} ids once (shared prefix), ` +
    `${samples.length} samples totalling ${
      samples.reduce((n, s) => n + s.input_ids.length, 0)
    } ids, ` +
    `deepest prompt ${deepest.turns.at(-1)!.promptLength} ids; turnTree JSON ` +
    `${(exported.length / 1e6).toFixed(0)} MB; built in ${
      ((performance.now() - built) / 1000).toFixed(1)
    } s`,
);

/** The next request of the deepest branch: its history + a new ~1k-token tool output. */
let iteration = 0;
function nextRequest(): CanonicalRequest {
  const last = deepest.turns.at(-1)!;
  const answer = last.message!;
  return request([
    ...last.messages,
    answer,
    {
      role: "tool",
      content: toolOutput(999, iteration++, 40),
      tool_call_id: answer.tool_calls![0].id,
    },
  ]);
}
const KEY = TurnTree.rootKey({ protocol: "chat", tools: TOOLS });

Deno.bench("mount: match the next history in the tree (walk only)", { group: "mount" }, () => {
  const req = nextRequest();
  const m = rollout.tree.mount(req.messages, KEY);
  if (m.base !== deepest.turns.at(-1)) throw new Error("did not mount on the deepest leaf");
});

Deno.bench("mount: count_tokens (match + render and tokenize the delta)", {
  group: "mount",
}, async () => {
  await runner.countTokens(rollout, nextRequest());
});

Deno.bench(
  "mount: one new turn end to end (TurnRunner.start + result, instant backend)",
  { group: "mount", n: 200, warmup: 10 },
  async (b) => {
    const req = nextRequest();
    await scriptCall("ls");
    const at = rollout.tree.mount(req.messages, KEY);
    const chain = rollout.chains[deepest.turns.at(-1)!.chain];
    const latest = chain.latest;
    b.start();
    const turn = await runner.start(rollout, req, "call_");
    await turn.result;
    b.end();
    // Undo, so every iteration mounts onto the same 200-turn tree (and continues its chain).
    at.node.children.pop();
    rollout.turns.pop();
    chain.latest = latest;
    latest.next = null;
  },
);

Deno.bench("linearize: buildSamples (every chain, root to leaf)", { group: "linearize" }, () => {
  buildSamples(rollout);
});

Deno.bench("linearize: sharedPrefixTree (every id once)", { group: "linearize" }, () => {
  sharedPrefixTree(rollout);
});

Deno.bench("export: turnTree (per-turn prompts and histories)", {
  group: "linearize",
  n: 5,
  warmup: 1,
}, () => {
  turnTree(rollout);
});
