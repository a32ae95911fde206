/**
 * Mount kinds through a real `TurnRunner` (in-memory generation backend test double): root,
 * extend, retry (answered from the recorded turn, no second generation), rewritten.
 */
import assert from "node:assert/strict";
import type { AssistantMessage, CanonicalRequest, Message, ToolSpec } from "../../canonical/mod.ts";
import { PolicyModel } from "../../model/mod.ts";
import { InMemoryBackendTestDouble } from "../../tests/support/in_memory_backend.ts";
import { qwen3SampledText } from "../../tests/invariants/conversation_generator.ts";
import { Rollout } from "../rollout.ts";
import { promptIds } from "../turn.ts";
import { TurnRunner } from "./turn_runner.ts";
import { RolloutActions } from "../rollout_actions.ts";
import type { EndedTurn, TurnObserver } from "./turn_observer.ts";
import { InterceptionGate } from "../../generation/mod.ts";

const model = await PolicyModel.load();
const tools: ToolSpec[] = [{ name: "bash", kind: "function", parameters: { type: "object" } }];
const u1: Message = { role: "user", content: "list files" };
const call: AssistantMessage = {
  role: "assistant",
  content: "",
  reasoning_content: "Run ls.",
  tool_calls: [{ id: "x", name: "bash", arguments: '{"command": "ls"}' }],
};
const answer: AssistantMessage = {
  role: "assistant",
  content: "Two files.",
  reasoning_content: "Done.",
};

function request(messages: Message[], withTools = tools): CanonicalRequest {
  return {
    protocol: "chat",
    model: "policy",
    messages,
    tools: withTools,
    sampling: {},
    stream: false,
  };
}

function setup() {
  const backend = new InMemoryBackendTestDouble();
  const runner = new TurnRunner(model, backend);
  const rollout = new Rollout("r", "token", {}, {});
  const script = async (m: AssistantMessage) =>
    backend.enqueue({
      output_ids: await model.tokenizer.encode(qwen3SampledText(m)),
      finish_reason: "stop",
    });
  return { backend, runner, rollout, script };
}

Deno.test("TurnRunner: root, extend, retry and rewritten", async () => {
  const { backend, runner, rollout, script } = setup();
  await script(call);
  const t1 = await runner.start(rollout, request([u1]), "call_");
  await t1.result;
  assert.equal(t1.mount, "root");
  assert.deepEqual(Array.from(promptIds(t1)), (await model.renderFull([u1], tools)).ids);

  // Retry: the identical request replays the recorded turn; nothing is generated.
  const again = await runner.start(rollout, request([u1]), "call_");
  assert.equal(again, t1);
  assert.equal(t1.retries, 1);
  assert.equal(backend.requests.length, 1);
  assert.equal(rollout.turns.length, 1);

  // Extend: history = recorded history + recorded answer (+ the tool result).
  const result: Message = {
    role: "tool",
    content: "a.py\nb.py",
    tool_call_id: t1.message!.tool_calls![0].id,
  };
  await script(answer);
  const history2 = [u1, t1.message!, result];
  const t2 = await runner.start(rollout, request(history2), "call_");
  await t2.result;
  assert.equal(t2.mount, "extend");
  assert.equal(t2.parent, t1);
  assert.equal(t2.renderedMessages, 1);
  assert.deepEqual(Array.from(promptIds(t2)), (await model.renderFull(history2, tools)).ids);

  // Rewritten: the client changed the answer it got (e.g. compaction); a new chain, full render.
  const edited: Message[] = [u1, { ...t1.message!, content: "Listing." }, result];
  await script(answer);
  const t3 = await runner.start(rollout, request(edited), "call_");
  await t3.result;
  assert.equal(t3.mount, "rewritten");
  assert.equal(t3.parent, null);
  assert.deepEqual(Array.from(promptIds(t3)), (await model.renderFull(edited, tools)).ids);

  // Another tool set never extends a prompt rendered with the old one.
  await script(answer);
  const t4 = await runner.start(rollout, request(history2, []), "call_");
  await t4.result;
  assert.equal(t4.mount, "rewritten");
  assert.equal(backend.pending, 0);
});

Deno.test("TurnRunner: a failed generation is not replayed; the retry generates", async () => {
  const { backend, runner, rollout, script } = setup();
  const t1 = await runner.start(rollout, request([u1]), "call_"); // nothing scripted: fails
  await assert.rejects(t1.result, /no scripted completion/);
  assert.equal(t1.status, "failed");
  await script(answer);
  const t2 = await runner.start(rollout, request([u1]), "call_");
  await t2.result;
  assert.notEqual(t2, t1);
  assert.equal(t2.status, "done");
  assert.equal(backend.requests.length, 2);
});

Deno.test("TurnRunner: an output without <|im_end|> is bridged untrained, and is not drift", async () => {
  const { backend, runner, rollout } = setup();
  const sampled = await model.tokenizer.encode(qwen3SampledText(call));
  assert.equal(sampled.at(-1), model.endOfTurnId);
  const output = sampled.slice(0, -1); // an engine that strips the stop token
  backend.enqueue({ output_ids: output, logprobs: output.map(() => -0.5), finish_reason: "stop" });
  const t1 = await runner.start(rollout, request([u1]), "call_");
  await t1.result;
  assert.equal(t1.drift, null);
  const result: Message = {
    role: "tool",
    content: "a.py",
    tool_call_id: t1.message!.tool_calls![0].id,
  };
  backend.enqueue({
    output_ids: await model.tokenizer.encode(qwen3SampledText(answer)),
    finish_reason: "stop",
  });
  const history = [u1, t1.message!, result];
  const t2 = await runner.start(rollout, request(history), "call_");
  await t2.result;
  assert.deepEqual(Array.from(t2.bridgeIds), [model.endOfTurnId]);
  assert.deepEqual(Array.from(promptIds(t2)), (await model.renderFull(history, tools)).ids);
  const [sample] = rollout.samples();
  const bridgeAt = t1.promptLength + output.length;
  assert.equal(sample.input_ids[bridgeAt], model.endOfTurnId);
  assert.equal(sample.loss_mask[bridgeAt], 0);
  assert.equal(sample.logprobs[bridgeAt], 0);
  assert.ok(sample.loss_mask.slice(t1.promptLength, bridgeAt).every((x) => x === 1));
});

Deno.test("TurnRunner: an empty think block the template drops is drift, trained by default", async () => {
  const { backend, runner, rollout } = setup();
  const empty: AssistantMessage = { role: "assistant", content: "Hi.", reasoning_content: "" };
  const ids = await model.tokenizer.encode(qwen3SampledText(empty));
  backend.enqueue({ output_ids: ids, finish_reason: "stop" });
  const t1 = await runner.start(rollout, request([u1]), "call_");
  await t1.result;
  assert.equal(t1.drift?.position, 0);
  const [sample] = rollout.samples();
  assert.deepEqual(Array.from(sample.loss_mask.slice(t1.promptLength)), ids.map(() => 1));
  assert.equal(sample.metadata.label_action, "train");
  assert.deepEqual(sample.metadata.drift, [{ turn: t1.id, ...t1.drift }]);
  assert.ok(rollout.samples({ labels: { drift: "mask" } })[0].loss_mask.every((x) => x === 0));
});

Deno.test("TurnRunner: the same history over another protocol is a new turn, not a replay", async () => {
  const { backend, runner, rollout, script } = setup();
  await script(answer);
  await script(answer);
  const chat = await runner.start(rollout, request([u1]), "call_");
  await chat.result;
  const anthropic = await runner.start(
    rollout,
    { ...request([u1]), protocol: "anthropic" },
    "toolu_",
  );
  await anthropic.result;
  assert.notEqual(anthropic, chat);
  assert.equal(backend.requests.length, 2);
  assert.equal(anthropic.retries + chat.retries, 0);
});

Deno.test("TurnRunner: the answer header is what the recorded answer reports", async () => {
  const { runner, rollout, script } = setup();
  await script(call);
  const t1 = await runner.start(rollout, request([u1]), "call_");
  const first = await t1.result;
  assert.deepEqual(t1.header, {
    id: first.id,
    model: "policy",
    created: t1.header!.created,
    inputTokens: first.usage.input_tokens,
    cachedTokens: 0,
  });
  await script(answer);
  const history = [u1, t1.message!, { role: "tool", content: "a.py", tool_call_id: "x" } as const];
  const t2 = await runner.start(rollout, request(history), "call_");
  const second = await t2.result;
  // The bridged prefix (turn 1's prompt and output) is reused verbatim: cached.
  assert.equal(t2.header!.cachedTokens, t1.promptLength + t1.outputIds.length);
  assert.equal(second.usage.cached_tokens, t2.header!.cachedTokens);
  assert.equal(second.usage.input_tokens, t2.header!.inputTokens);
});

Deno.test("TurnRunner: refusals are TurnErrors with a kind, and the turn is failed", async () => {
  const { runner, rollout } = setup();
  await assert.rejects(runner.start(rollout, request([]), "call_"), {
    name: "TurnError",
    kind: "invalid_request",
  });
  const tiny = new TurnRunner(
    await PolicyModel.load({ contextLength: 4 }),
    new InMemoryBackendTestDouble(),
  );
  await assert.rejects(tiny.start(rollout, request([u1]), "call_"), {
    name: "TurnError",
    kind: "context_exceeded",
  });
  assert.equal(rollout.turns.at(-1)!.status, "failed");
  rollout.finish(null);
  await assert.rejects(runner.start(rollout, request([u1]), "call_"), {
    name: "TurnError",
    kind: "rollout_finished",
  });
});

Deno.test("TurnRunner: black-box turns are registered, recorded and failed by the same path", async () => {
  const { runner, rollout } = setup();
  let answerNow!: (a: { message: AssistantMessage; usage: typeof usage }) => void;
  const usage = { input_tokens: 120, output_tokens: 7 };
  const t1 = runner.startBlackBox(rollout, request([u1]), () => new Promise((r) => answerNow = r));
  assert.equal(t1.status, "pending", "registered when the request arrives");
  assert.equal(rollout.turns.length, 1);
  answerNow({ message: call, usage });
  const a1 = await t1.result;
  assert.equal(t1.status, "done");
  assert.equal(t1.blackBox, true);
  assert.deepEqual(t1.message, call);
  assert.equal(t1.promptLength, 120);
  assert.deepEqual(a1.usage, { ...usage, reasoning_tokens: 0, cached_tokens: 0 });
  assert.deepEqual(Array.from(t1.outputIds), [], "no token ids are claimed");

  // The next request extends the recorded answer: same chain, parent linked.
  const history = [u1, call, { role: "tool", content: "a.py", tool_call_id: "x" } as const];
  const t2 = runner.startBlackBox(
    rollout,
    request(history),
    () => Promise.reject(new Error("upstream down")),
  );
  await assert.rejects(t2.result, /upstream down/);
  assert.equal(t2.parent, t1);
  assert.equal(t2.chain, t1.chain);
  assert.equal(t2.status, "failed");
  assert.equal(t2.error, "upstream down");
  const [sample] = rollout.samples();
  assert.deepEqual(sample.turns, [t1.id]);
});

/** A runner on the real interception gate (a turn waits until the test completes it). */
function gated() {
  const gate = new InterceptionGate();
  const ended: EndedTurn[] = [];
  const started: string[] = [];
  const observer: TurnObserver = {
    turnStarted: (backend) => started.push(backend),
    turnEnded: (e) => ended.push(e),
  };
  const rollouts = new RolloutActions({ model, gate, turns: { observer } });
  // The runner as the façade hands it out (it keeps the runner itself to itself).
  const runner = {
    start: rollouts.startTurn.bind(rollouts),
    abandon: rollouts.abandon.bind(rollouts),
  };
  return { gate, runner, rollouts, started, ended, rollout: new Rollout("g", "token", {}, {}) };
}

Deno.test("TurnRunner: close refuses new turns, in-flight ones finish, whenIdle waits for them", async () => {
  const { gate, runner, rollouts, started, ended, rollout } = gated();
  const t1 = await runner.start(rollout, request([u1]), "call_");
  assert.equal(rollouts.pendingTurns(), 1);
  let idle = false;
  rollouts.close("the gateway is shutting down");
  const whenIdle = rollouts.whenIdle().then(() => idle = true);

  await assert.rejects(
    runner.start(rollout, request([{ role: "user", content: "another task" }]), "call_"),
    { name: "TurnError", kind: "shutting_down", message: "the gateway is shutting down" },
  );
  assert.equal(await runner.start(rollout, request([u1]), "call_"), t1, "a retry still attaches");
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(idle, false, "a turn is still in flight");

  const pending = await gate.next(1_000);
  const ids = await model.tokenizer.encode(qwen3SampledText(answer));
  gate.complete(pending!.request_id, { output_ids: ids, finish_reason: "stop" });
  await t1.result;
  await whenIdle;
  assert.equal(rollouts.pendingTurns(), 0);
  assert.equal(t1.status, "done");
  assert.deepEqual(started, ["gate", "gate"]);
  assert.deepEqual(ended.map((e) => [e.turn.status, (e.error as Error)?.name]), [
    ["failed", "TurnError"],
    ["done", undefined],
  ]);
  assert.equal(ended[1].turn, t1);
  assert.ok(ended[1].addedMs >= 0 && ended[1].addedMs < 60_000, `${ended[1].addedMs}`);
});

Deno.test("TurnRunner: abandon fails what is still in flight; a late completion changes nothing", async () => {
  const { gate, runner, rollouts, ended, rollout } = gated();
  const t1 = await runner.start(rollout, request([u1]), "call_");
  const pending = await gate.next(1_000);
  rollouts.close("shutting down");
  runner.abandon("the gateway shut down before this turn was answered");
  await assert.rejects(t1.result, { name: "TurnError", kind: "shutting_down" });
  await rollouts.whenIdle();
  assert.equal(t1.status, "failed");
  // The abandoned request was withdrawn: the trainer's late answer is refused (410 over HTTP).
  assert.throws(
    () => gate.complete(pending!.request_id, { output_ids: [9707, 151645], finish_reason: "stop" }),
    { name: "GateError", message: /withdrawn/ },
  );
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(t1.status, "failed", "not revived by the trainer's late answer");
  assert.deepEqual(Array.from(t1.outputIds), []);
  assert.equal(ended.length, 1, "ended once");
});

Deno.test("TurnRunner: a turn's history is the shared tree path plus the client's own forms", async () => {
  const { runner, rollout, script } = setup();
  await script(call);
  const t1 = await runner.start(rollout, request([u1]), "call_");
  const sampled = (await t1.result).message;
  const id = sampled.tool_calls![0].id;
  // The client sends the sampled call back with its arguments re-serialized (as pi does), and
  // every message as a fresh object (as after JSON.parse of a body).
  const resent: AssistantMessage = {
    ...structuredClone(sampled),
    tool_calls: [{ id, name: "bash", arguments: '{"command":"ls"}' }],
  };
  const history2: Message[] = [
    structuredClone(u1),
    resent,
    { role: "tool", content: "a\nb", tool_call_id: id },
  ];
  await script(answer);
  const t2 = await runner.start(rollout, request(history2), "call_");
  await t2.result;
  assert.equal(t2.parent, t1, "the re-serialized call still extends the chain");
  // The turn holds no copy of its request's history: matched messages are the tree's objects,
  // only the message in another form is kept, and the tools are the first turn's array.
  assert.deepEqual(t2.historyEdits, [[1, resent]]);
  assert.equal(t2.history.depth, 3);
  assert.equal(t2.history.parent!.parent, t1.history, "the path above is t1's prompt node");
  assert.equal(t2.history.parent!.parent!.message, t1.messages[0]);
  assert.equal(t2.tools, t1.tools);
  // Read back, the history is what the client sent, message for message.
  assert.deepEqual(t2.messages, history2);
  assert.equal(t2.messages[1], resent);
  assert.deepEqual(t1.messages, [u1]);

  // The next request re-sends the same form again: the turn shares t2's copy instead of its own.
  const final = (await t2.result).message;
  await script(answer);
  const history3 = [
    ...structuredClone(history2),
    final,
    { role: "user", content: "more" } as Message,
  ];
  const t3 = await runner.start(rollout, request(history3), "call_");
  await t3.result;
  assert.equal(t3.parent, t2);
  assert.equal(t3.historyEdits.length, 1);
  assert.equal(t3.historyEdits[0][1], resent, "t2's object, not the third request's copy");
  assert.deepEqual(t3.messages, history3);
});
