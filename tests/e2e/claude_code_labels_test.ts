/**
 * Branch labels with the real Claude Code CLI, against a real `main.ts serve` child process in
 * gate mode and a policy TEST DOUBLE (`gate_policy.ts`) answering the gate over HTTP:
 *
 * - a sub-agent: the main agent calls Claude Code's `Agent` tool (`subagent_type:
 *   "general-purpose"`, in the foreground); Claude Code runs the sub-agent with its own system
 *   prompt in the same rollout (a shell call, then a report); the main agent gets the report as
 *   the tool result and finishes. → a `subagent` chain naming the `Agent` call, closed by the
 *   main turn that carries its result; the main chain stays `main`.
 * - resume and compaction: `claude -p --session-id <id>`, then `--resume <id>` with a new prompt
 *   (extends the main chain), `--resume <id> "/compact"` (the summary request), and `--resume`
 *   again (the history now starts from the summary). → a `compaction` chain linked to the main
 *   chain and to the summary turn it replaced.
 * - a rewrite: the policy lists the directory, then writes `\u00e9` escape text in a Bash
 *   command; Claude Code sends that tool input back decoded (`é`). → the third request forks the
 *   main chain after the first turn: a `rewrite` chain with the change as evidence, whose sample
 *   trains only its own turn (the shared first turn is trained in the main sample).
 * - failed requests: the policy fails the first attempt of each turn (529, `overloaded_error`);
 *   Claude Code re-sends the same body. → each failed turn stays `failed`, its re-send becomes the
 *   one `done` turn for that history, on the main chain. A 500 (`api_error`) is not re-sent.
 *
 * @module
 */
import assert from "node:assert/strict";
import { answerText, sharedModel, toolCallText } from "../support/scripted_policy.ts";
import { toolResponses } from "./cli_scenario.ts";
import {
  ESCAPE_COMMAND,
  ESCAPE_FINAL,
  ESCAPE_PROMPT,
  escapeScript,
} from "./capture_claude_code.ts";
import type { GateScript } from "./gate_policy.ts";
import {
  chainTurns,
  checkTurns,
  labelsTest,
  lastUser,
  toolCallOf,
  toolResult,
} from "./claude_code_rig.ts";

// ---------------------------------------------------------------------------------------------
// Sub-agent

const MAIN_PROMPT = "Delegate this to a sub-agent: it must create sub-made.txt with the shell.";
const SUB_PROMPT = "SUBTASK: create the file sub-made.txt containing sub-ok with the shell.";
const SUB_COMMAND = "echo sub-ok > sub-made.txt && ls";
const SUB_REPORT = "SUB-REPORT: sub-made.txt now contains sub-ok.";
const MAIN_FINAL = "MAIN-DONE: the sub-agent created sub-made.txt.";

const subagentScript: GateScript = ({ text }) => {
  if (text.includes(MAIN_PROMPT)) {
    if (lastUser(text).includes("</tool_response>")) {
      return answerText("The sub-agent reported back.", MAIN_FINAL);
    }
    return toolCallText("This is a job for a sub-agent.", "Agent", {
      description: "Create sub-made.txt",
      prompt: SUB_PROMPT,
      subagent_type: "general-purpose",
      run_in_background: false,
    });
  }
  if (text.includes(SUB_PROMPT)) {
    if (lastUser(text).includes("</tool_response>")) {
      return answerText("The file is there.", SUB_REPORT);
    }
    return toolCallText("I will use the shell.", "Bash", { command: SUB_COMMAND });
  }
  return answerText("Unexpected request.", "UNEXPECTED");
};

labelsTest(
  "subagent: Agent tool call, sub-agent chain, main chain closes it",
  subagentScript,
  async (rig) => {
    const run = await rig.claude(MAIN_PROMPT);
    assert.equal(run.completion.finalText?.trim(), MAIN_FINAL, "the main agent's final answer");
    assert.equal(await Deno.readTextFile(`${rig.workdir}/sub-made.txt`), "sub-ok\n", "the file");

    const tree = await rig.tree();
    checkTurns(tree, rig.policy.records);
    assert.equal(tree.turns.length, 4, "main: call + final; sub-agent: shell call + report");
    for (const t of tree.turns) assert.equal(t.status, "done");
    assert.equal(tree.chains.length, 2, "two chains");
    const [main, sub] = tree.chains;
    assert.equal(main.label, "main");
    assert.equal(main.parent, null);
    assert.equal(sub.label, "subagent");
    assert.equal(sub.parent, main.id, "the sub-agent hangs off the main chain");

    const [m0, m1] = chainTurns(tree, main.id);
    const [s0, s1] = chainTurns(tree, sub.id);
    assert.ok(m0 && m1 && s0 && s1, "two turns on each chain");
    assert.deepEqual([m0.mount, m1.mount, s0.mount, s1.mount], [
      "root",
      "extend",
      "rewritten",
      "extend",
    ]);
    assert.equal(m1.parent, m0.id);
    assert.equal(s1.parent, s0.id);
    const agentCall = toolCallOf(m0, "Agent");
    assert.ok(agentCall, "the main agent's first answer calls Agent");
    assert.equal(JSON.parse(agentCall.arguments).subagent_type, "general-purpose");
    assert.notEqual(s0.messages[0].content, m0.messages[0].content, "the sub-agent's own system");
    assert.ok(s0.messages.some((m) => m.role === "user" && m.content.includes(SUB_PROMPT)));
    assert.ok(toolCallOf(s0, "Bash"), "the sub-agent called the shell");
    assert.ok(toolResult(s1.messages, toolCallOf(s0, "Bash")!.id)?.includes("sub-made.txt"));
    const handBack = toolResult(m1.messages, agentCall.id);
    assert.ok(handBack?.includes(SUB_REPORT), `the Agent result carries the report: ${handBack}`);

    assert.equal(sub.evidence.tool_call_id, agentCall.id, "evidence: the Agent call");
    assert.equal(sub.evidence.tool_name, "Agent");
    assert.equal(sub.evidence.parent_turn, m0.id);
    assert.equal(sub.evidence.prompt_matched, true);
    assert.equal(sub.evidence.closed_by_turn, m1.id, "closed by the turn carrying the result");

    const samples = await rig.finish();
    assert.equal(samples.length, 2, "one sample per chain");
    const mainSample = samples.find((s) => s.branch === "main")!;
    const subSample = samples.find((s) => s.branch === "subagent")!;
    assert.deepEqual(mainSample.turns, [m0.id, m1.id]);
    assert.equal(mainSample.parent, null);
    assert.deepEqual(subSample.turns, [s0.id, s1.id]);
    assert.deepEqual(subSample.parent, { chain: main.id, turn: m0.id, tool_call_id: agentCall.id });
    const evidence = subSample.metadata.evidence as Record<string, unknown>;
    assert.equal(evidence.tool_call_id, agentCall.id);
    assert.equal(evidence.closed_by_turn, m1.id);
    assert.deepEqual(subSample.input_ids, [...s1.prompt_ids, ...s1.output_ids]);
    assert.deepEqual(mainSample.input_ids, [...m1.prompt_ids, ...m1.output_ids]);
    for (const s of samples) {
      const sampled = s.loss_mask.reduce((a, b) => a + b, 0);
      assert.equal(sampled, s.num_sampled, `${s.branch}: trained on every sampled id`);
    }
    const subText = await (await sharedModel()).decode(subSample.input_ids);
    assert.ok(toolResponses(subText)[0]?.includes("sub-made.txt"), "the sub-agent's shell output");
  },
);

// ---------------------------------------------------------------------------------------------
// Resume, then compaction

const FIRST_PROMPT = "Create resumed.txt containing resume-ok, then list the files.";
const FIRST_COMMAND = "echo resume-ok > resumed.txt && ls";
const FIRST_FINAL = "Created resumed.txt.";
const RESUME_PROMPT = "RESUMED: now say goodbye.";
const RESUME_FINAL = "Goodbye!";
const SUMMARY = "The user had resumed.txt created (it contains resume-ok); then said goodbye.";
const AFTER_PROMPT = "AFTER-COMPACTION: what is in resumed.txt?";
const AFTER_FINAL = "resumed.txt contains resume-ok.";

const resumeScript: GateScript = ({ text }) => {
  const user = lastUser(text);
  if (user.includes(AFTER_PROMPT)) return answerText("From the summary.", AFTER_FINAL);
  // Claude Code's compaction request: the whole history, then its summary instructions.
  if (user.includes("<summary>")) {
    return answerText(
      "Summarize.",
      `<analysis>\nA file was created, then a goodbye.\n</analysis>\n\n<summary>\n${SUMMARY}\n</summary>`,
    );
  }
  if (user.includes(RESUME_PROMPT)) return answerText("Say goodbye.", RESUME_FINAL);
  if (user.includes("</tool_response>")) return answerText("Done.", FIRST_FINAL);
  return toolCallText("Use the shell.", "Bash", { command: FIRST_COMMAND });
};

labelsTest(
  "resume and /compact: resume extends main, compaction chain after the summary",
  resumeScript,
  async (rig) => {
    const session = crypto.randomUUID();
    const first = await rig.claude(FIRST_PROMPT, ["--session-id", session]);
    assert.equal(first.completion.finalText?.trim(), FIRST_FINAL);
    assert.equal(await Deno.readTextFile(`${rig.workdir}/resumed.txt`), "resume-ok\n");
    const afterFirst = await rig.tree();
    assert.equal(afterFirst.turns.length, 2);

    // Resume: the same session, a new prompt; the history is re-sent and extends the main chain.
    const resumed = await rig.claude(RESUME_PROMPT, ["--resume", session]);
    assert.equal(resumed.completion.finalText?.trim(), RESUME_FINAL);
    const afterResume = await rig.tree();
    checkTurns(afterResume, rig.policy.records);
    assert.equal(afterResume.turns.length, 3, "one more turn");
    assert.equal(afterResume.chains.length, 1, "no new chain");
    const r = afterResume.turns[2];
    assert.equal(r.mount, "extend", "the resumed request extends the recorded history");
    assert.equal(r.parent, afterFirst.turns[1].id, "from the first run's final turn");
    assert.equal(r.chain, 0);
    assert.equal(r.branch, "main");
    assert.ok(r.messages.at(-1)?.content.includes(RESUME_PROMPT));
    assert.equal(r.rendered_messages, 1, "only the new user message is rendered");

    // Compaction: `/compact` in -p mode sends one summary request over the whole history.
    await rig.claude("/compact", ["--resume", session]);
    const afterCompact = await rig.tree();
    checkTurns(afterCompact, rig.policy.records);
    const summaries = afterCompact.turns.slice(3);
    assert.equal(summaries.length, 1, "one summary request");
    const summary = summaries[0];
    assert.equal(summary.status, "done");
    assert.equal(summary.parent, r.id, "the summary request extends the main chain");
    assert.equal(summary.branch, "main");
    assert.ok(summary.answer?.content.includes(SUMMARY));

    // The next run starts from the summary: a new chain replacing the main one.
    const after = await rig.claude(AFTER_PROMPT, ["--resume", session]);
    assert.equal(after.completion.finalText?.trim(), AFTER_FINAL);
    const tree = await rig.tree();
    checkTurns(tree, rig.policy.records);
    assert.equal(tree.turns.length, 5);
    const c = tree.turns[4];
    assert.equal(c.status, "done");
    assert.equal(c.mount, "rewritten", "the compacted history extends no recorded turn");
    assert.equal(c.parent, null);
    assert.equal(tree.chains.length, 2);
    const compaction = tree.chains[1];
    assert.equal(compaction.label, "compaction");
    assert.equal(compaction.root, c.id);
    assert.equal(compaction.parent, 0, "linked to the replaced main chain");
    assert.equal(compaction.evidence.replaced_chain, 0);
    assert.equal(compaction.evidence.replaced_turn, summary.id, "it replaced the summary turn");
    assert.equal(c.branch, "compaction");
    assert.equal(c.messages[0].content, summary.messages[0].content, "same system prompt");
    assert.ok(
      c.messages.some((m) => m.role === "user" && m.content.includes(SUMMARY)),
      "the new history carries the summary the policy wrote",
    );
    assert.ok(c.messages.at(-1)?.content.includes(AFTER_PROMPT));

    const samples = await rig.finish();
    assert.deepEqual(samples.map((s) => s.branch), ["main", "compaction"]);
    const [mainSample, compactionSample] = samples;
    assert.deepEqual(mainSample.turns, tree.turns.slice(0, 4).map((t) => t.id));
    assert.deepEqual(compactionSample.turns, [c.id]);
    assert.deepEqual(compactionSample.parent, { chain: 0 });
    assert.equal(
      (compactionSample.metadata.evidence as Record<string, unknown>).replaced_turn,
      summary.id,
    );
    assert.deepEqual(compactionSample.input_ids, [...c.prompt_ids, ...c.output_ids]);
  },
);

// ---------------------------------------------------------------------------------------------
// A rewrite: Claude Code decodes `\uXXXX` escape text in a tool input it sends back

labelsTest(
  "rewrite: a \\uXXXX tool input sent back decoded forks a rewrite chain, trained once",
  escapeScript,
  async (rig) => {
    const run = await rig.claude(ESCAPE_PROMPT);
    assert.equal(run.completion.finalText?.trim(), ESCAPE_FINAL);
    const tree = await rig.tree();
    checkTurns(tree, rig.policy.records);
    const [t0, t1, t2] = tree.turns;
    assert.equal(JSON.parse(toolCallOf(t1, "Bash")!.arguments).command, ESCAPE_COMMAND);
    assert.deepEqual(tree.turns.map((t) => [t.chain, t.parent]), [
      [0, null],
      [0, t0.id],
      [1, t0.id],
    ]);
    assert.deepEqual(tree.chains.map((c) => [c.label, c.parent]), [["main", null], [
      "rewrite",
      0,
    ]]);
    const e = tree.chains[1].evidence;
    assert.deepEqual([e.base_turn, e.replaced_turn, e.path, e.recorded, e.received], [
      t0.id,
      t1.id,
      "tool_calls[0].arguments.command",
      ESCAPE_COMMAND,
      "echo 'café' > cafe.txt",
    ]);
    const samples = await rig.finish();
    assert.deepEqual(samples.map((s) => [s.branch, s.turns]), [
      ["main", [t0.id, t1.id]],
      ["rewrite", [t0.id, t2.id]],
    ]);
    assert.equal(samples[1].trained_from, t0.prompt_ids.length + t0.output_ids.length);
  },
);

// ---------------------------------------------------------------------------------------------
// Failed requests, re-sent by Claude Code
//
// The gateway answers a streaming request with a 200 at once (keep-alive comments while the
// policy works), so a failure reaches Claude Code as an in-stream `error` event. Claude Code
// re-sends the request for an in-stream `overloaded_error` (503/529) but not for an `api_error`
// (500/502): that ends the run (checked below).

const RETRY_PROMPT = "Create retried.txt containing retry-ok.";
const RETRY_COMMAND = "echo retry-ok > retried.txt && ls";
const RETRY_FINAL = "Created retried.txt after two retries.";
const OVERLOADED = { fail: { status: 529, error: "policy engine overloaded" } };

/** Fails the first attempt of each of the two turns; answers the re-sends. */
const retryScript: GateScript = ({ text, index }) => {
  if (index === 0 || index === 2) return OVERLOADED;
  if (lastUser(text).includes("</tool_response>")) return answerText("Done.", RETRY_FINAL);
  return toolCallText("Use the shell.", "Bash", { command: RETRY_COMMAND });
};

labelsTest(
  "retry: failed requests re-sent, each history recorded once as done",
  retryScript,
  async (rig) => {
    const run = await rig.claude(RETRY_PROMPT);
    assert.equal(run.completion.finalText?.trim(), RETRY_FINAL);
    assert.equal(await Deno.readTextFile(`${rig.workdir}/retried.txt`), "retry-ok\n");

    const records = rig.policy.records;
    assert.equal(records.length, 4, "two failed attempts, two answered re-sends");
    assert.deepEqual(records[1].prompt_ids, records[0].prompt_ids, "re-send 1: the same prompt");
    assert.deepEqual(records[3].prompt_ids, records[2].prompt_ids, "re-send 2: the same prompt");

    const tree = await rig.tree();
    checkTurns(tree, records);
    assert.equal(tree.turns.length, 4);
    const [failed1, root, failed2, final] = tree.turns;
    assert.deepEqual(tree.turns.map((t) => t.status), ["failed", "done", "failed", "done"]);
    for (const f of [failed1, failed2]) assert.match(f.error ?? "", /policy engine overloaded/);
    assert.deepEqual(root.messages, failed1.messages, "the first re-send carries the same history");
    assert.deepEqual(final.messages, failed2.messages, "so does the second");
    for (const failed of [failed1, failed2]) {
      const same = tree.turns.filter((t) =>
        JSON.stringify(t.messages) === JSON.stringify(failed.messages)
      );
      assert.deepEqual(same.map((t) => t.status), ["failed", "done"], "one done turn per history");
    }
    // The re-send of the failed root is the main chain's root, not a new (compaction) chain.
    assert.equal(root.mount, "root");
    assert.equal(root.parent, null);
    assert.equal(failed2.parent, root.id);
    assert.equal(final.parent, root.id);
    assert.equal(final.mount, "extend");
    assert.equal(tree.chains.length, 1, "the re-sends start no second chain");
    assert.equal(tree.chains[0].label, "main");
    assert.equal(tree.chains[0].root, root.id, "the chain's root is the turn that was answered");
    for (const t of tree.turns) assert.equal(t.branch, "main");

    const samples = await rig.finish();
    assert.equal(samples.length, 1);
    assert.equal(samples[0].branch, "main");
    assert.deepEqual(samples[0].turns, [root.id, final.id], "failed turns are in no sample");
    assert.deepEqual(samples[0].input_ids, [...final.prompt_ids, ...final.output_ids]);
  },
);

const apiErrorScript: GateScript = ({ index }) =>
  index === 0
    ? { fail: { status: 500, error: "policy engine crashed" } }
    : answerText("Unexpected.", "UNEXPECTED");

labelsTest(
  "retry: an in-stream api_error (500) is not re-sent; the run fails",
  apiErrorScript,
  async (rig) => {
    const run = await rig.claude(RETRY_PROMPT, [], false);
    assert.equal(run.completion.ok, false);
    assert.match(run.completion.error ?? "", /api_error: API Error: policy engine crashed/);
    assert.equal(run.exitCode, 1);
    assert.equal(rig.policy.records.length, 1, "no re-send");
    const tree = await rig.tree();
    assert.deepEqual(tree.turns.map((t) => t.status), ["failed"]);
    assert.deepEqual(await rig.finish(), [], "nothing to train on");
  },
);
