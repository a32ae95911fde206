/**
 * A Claude Code session replayed through the gateway, built from the recorded 2.1.330 request
 * and extended turn by turn with the gateway's own answers: the main agent delegates to a
 * sub-agent (`Agent` tool), the sub-agent runs `Bash` and reports, the main agent reads the
 * report and runs `Bash` itself, a title-generation side request comes in, and finally the
 * conversation is compacted into a summary.
 *
 * @module
 */
import assert from "node:assert/strict";
import { answerText, pythonJson, toolCallText } from "../support/scripted_policy.ts";
import {
  type AnthropicAnswer,
  anthropicTurn,
  claudeNext,
  fixtures,
  type Json,
  moveCacheControl,
  type RolloutHandle,
  type TestGateway,
  toolUses,
} from "./agent_clients.ts";

export const SUB_PROMPT =
  "List every file in the repository root and report their names, one per line.";
export const SUBAGENT_SYSTEM =
  "You are an agent for Claude Code, Anthropic's official CLI for Claude. Given the user's " +
  "message, you should use the tools available to complete the task. Do what has been asked; " +
  "nothing more, nothing less. When you complete the task, respond with a concise report.";
export const TITLE_SYSTEM =
  "Generate a concise, sentence-case title (3-7 words) that captures the main topic or goal of " +
  'this coding session. Return JSON with a single "title" field.';
export const SUMMARY =
  "This session is being continued from a previous conversation that ran out of context. The " +
  "summary below covers the earlier portion of the conversation.\n\nSummary:\n1. Primary " +
  "Request: create probe.txt and list the files.\n2. Done: a sub-agent listed README.md and " +
  "probe.txt; `cat probe.txt` printed probe-ok.\n\nPlease continue the conversation from where " +
  "we left off without asking the user any further questions.";

/** Tool outputs of the session, as the tool results carry them. */
export const LS_OUTPUT = ".\n..\n.git\nREADME.md\nprobe.txt";
export const SUB_REPORT = "README.md\nprobe.txt";
export const AGENT_FOOTER = "agentId: a1f9c2 (use SendMessage with to: 'a1f9c2' to continue)";
export const CAT_OUTPUT = "probe-ok";

/** A Qwen3 turn with several tool calls, joined by `sep` (the template writes one newline). */
export function callsText(
  reasoning: string,
  calls: [string, Record<string, unknown>][],
  sep = "\n",
): string {
  const blocks = calls.map(([name, args]) =>
    `<tool_call>\n{"name": ${JSON.stringify(name)}, "arguments": ${pythonJson(args)}}\n</tool_call>`
  );
  return `<think>\n${reasoning}\n</think>\n\n${blocks.join(sep)}<|im_end|>`;
}

/** The recorded first request (system, 12 tools incl. `Agent`, the task). */
export function mainBody(): Json {
  return fixtures.claudeCode()[0].body;
}

/** A sub-agent's first request: its own system prompt, no `Agent` tool, the prompt as task. */
export function subagentBody(prompt: string): Json {
  const main = mainBody();
  const env = main.messages[0].content[0].text;
  return {
    model: main.model,
    messages: moveCacheControl([{
      role: "user",
      content: [{ type: "text", text: env }, { type: "text", text: prompt }],
    }]),
    system: [
      { type: "text", text: main.system[0].text, cache_control: { type: "ephemeral" } },
      { type: "text", text: SUBAGENT_SYSTEM, cache_control: { type: "ephemeral" } },
    ],
    tools: main.tools.filter((t: Json) => ["Bash", "Read", "Edit", "Write"].includes(t.name)),
    metadata: main.metadata,
    max_tokens: main.max_tokens,
    thinking: main.thinking,
    stream: true,
  };
}

/** Claude Code's title generation: another system prompt, no tools. */
export function titleBody(): Json {
  return {
    model: "claude-haiku-4-5",
    max_tokens: 512,
    system: [{ type: "text", text: TITLE_SYSTEM }],
    messages: [{ role: "user", content: "Create probe.txt then list files" }],
    stream: true,
  };
}

/** The request after compaction: same system and tools, history replaced by a summary. */
export function compactedBody(): Json {
  const main = mainBody();
  const env = main.messages[0].content[0].text;
  return {
    ...main,
    messages: moveCacheControl([{
      role: "user",
      content: [{ type: "text", text: env }, { type: "text", text: SUMMARY }],
    }]),
  };
}

export interface Session {
  /** Answers in order: main0, sub0, sub1, main1, main2, title, compacted. */
  answers: AnthropicAnswer[];
  agentCallId: string;
  /** The tree after the sub-agent finished but before the parent saw its result. */
  treeBeforeClose: Json;
}

/** Plays the whole session; each step asserts the answer is the planned one. */
export async function claudeCodeSession(t: TestGateway, r: RolloutHandle): Promise<Session> {
  const answers: AnthropicAnswer[] = [];
  // 1. main agent delegates
  t.replies.push(toolCallText("This is a listing task; a sub-agent can do it.", "Agent", {
    description: "List repository files",
    prompt: SUB_PROMPT,
    subagent_type: "general-purpose",
  }));
  const main0 = mainBody();
  const a0 = await anthropicTurn(t, r, main0);
  answers.push(a0);
  assert.equal(a0.stop_reason, "tool_use");
  const [agentCall] = toolUses(a0);
  assert.equal(agentCall.name, "Agent");
  assert.equal(agentCall.input.prompt, SUB_PROMPT);

  // 2. the sub-agent runs a command and reports
  t.replies.push(toolCallText("I will list the directory.", "Bash", {
    command: "ls -a",
    description: "List files",
  }));
  const sub0 = subagentBody(SUB_PROMPT);
  const s0 = await anthropicTurn(t, r, sub0);
  answers.push(s0);
  const [ls] = toolUses(s0);
  assert.equal(ls.name, "Bash");
  t.replies.push(answerText("Two files besides git metadata.", SUB_REPORT));
  const s1 = await anthropicTurn(
    t,
    r,
    claudeNext(sub0, s0, [{ tool_use_id: ls.id, content: LS_OUTPUT }]),
  );
  answers.push(s1);
  assert.equal(s1.stop_reason, "end_turn");
  const treeBeforeClose = await t.tree(r.id);

  // 3. the main agent gets the sub-agent's report, checks the file, answers
  t.replies.push(toolCallText("Check the probe file's content.", "Bash", {
    command: "cat probe.txt",
    description: "Show probe.txt",
  }));
  const main1 = claudeNext(main0, a0, [{
    tool_use_id: agentCall.id,
    content: [{ type: "text", text: SUB_REPORT }, { type: "text", text: AGENT_FOOTER }],
  }]);
  const a1 = await anthropicTurn(t, r, main1);
  answers.push(a1);
  const [cat] = toolUses(a1);
  t.replies.push(answerText("All done.", "Created probe.txt; the repository has README.md."));
  const a2 = await anthropicTurn(
    t,
    r,
    claudeNext(main1, a1, [{ tool_use_id: cat.id, content: CAT_OUTPUT }]),
  );
  answers.push(a2);

  // 4. title generation (side request)
  t.replies.push(answerText("A short title.", '{"title": "Create probe file and list files"}'));
  answers.push(await anthropicTurn(t, r, titleBody()));

  // 5. compaction: same system and tools, history replaced by a summary
  t.replies.push(answerText("Nothing is left to do.", "The task is complete."));
  answers.push(await anthropicTurn(t, r, compactedBody()));
  return { answers, agentCallId: agentCall.id, treeBeforeClose };
}
