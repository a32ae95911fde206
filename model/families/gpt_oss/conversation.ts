/**
 * A canonical conversation as harmony messages (gpt-oss's format), before any token is written:
 *
 * - a `system` message (model identity, knowledge cutoff, current date, reasoning effort, the
 *   valid channels, and with function tools the line routing their calls to `commentary`);
 * - a `developer` message when the conversation starts with a system message (its text under
 *   `# Instructions`) or offers tools (the `functions` namespace, `tool_declarations.ts`);
 * - `user` messages; a later system message (a harness reminder) as a developer message in place;
 * - an assistant message as up to four kinds of harmony messages: its reasoning on `analysis`, its
 *   text on `final` (or, before tool calls, as a `commentary` preamble), one `commentary` message
 *   per tool call addressed `to=functions.NAME` with content type `<|constrain|>json` and the
 *   arguments verbatim;
 * - a tool result from `functions.NAME` to `assistant` on `commentary` (the name from the
 *   message, else from the call it answers).
 *
 * Reasoning in history follows harmony's rule: once the conversation's last assistant message is
 * a final answer, every analysis message before the first final answer is left out.
 *
 * @module
 */
import type { AssistantMessage, Message, ToolCall, ToolSpec } from "../../../canonical/mod.ts";
import { SYSTEM_JOINER } from "../../template_input.ts";
import type { DeltaHistory } from "../family.ts";
import { toolsSection } from "./tool_declarations.ts";

/** One harmony message: `<|start|>AUTHOR[ to=RECIPIENT][<|channel|>CHANNEL][ TYPE]<|message|>…`. */
export interface HarmonyMessage {
  role: "system" | "developer" | "user" | "assistant" | "tool";
  /** What follows `<|start|>`: the role, or a tool's name for a tool result. */
  author: string;
  recipient?: string;
  channel?: string;
  /** `<|constrain|>json` (the marker is a token of its own), or plain text such as `json`. */
  contentType?: string;
  content: string;
}

/** The system message's fields (template variables). */
export interface HarmonyPreamble {
  modelIdentity: string;
  knowledgeCutoff: string;
  /** `YYYY-MM-DD`. */
  conversationStartDate: string;
  reasoningEffort: "low" | "medium" | "high";
}

/** The marker a content type starts with when it is written as a token. */
export const CONSTRAIN = "<|constrain|>";

/** The text of harmony's system message. */
export function systemText(p: HarmonyPreamble, functionTools: boolean): string {
  const channels = "# Valid channels: analysis, commentary, final. Channel must be included for " +
    "every message." +
    (functionTools ? "\nCalls to these tools must go to the commentary channel: 'functions'." : "");
  return [
    `${p.modelIdentity}\nKnowledge cutoff: ${p.knowledgeCutoff}\n` +
    `Current date: ${p.conversationStartDate}`,
    `Reasoning: ${p.reasoningEffort}`,
    channels,
  ].join("\n\n");
}

/** The text of a developer message: instructions (when given), then the tools (when any). */
export function developerText(instructions: string | null, tools: readonly ToolSpec[]): string {
  const sections = instructions === null ? [] : ["# Instructions", instructions];
  if (tools.length > 0) sections.push(toolsSection(tools));
  return sections.join("\n\n");
}

/** The harmony messages of one assistant message, as the model writes them, in order. */
export function answerMessages(m: AssistantMessage): HarmonyMessage[] {
  const out: HarmonyMessage[] = [];
  const assistant = { role: "assistant", author: "assistant" } as const;
  if (m.reasoning_content) {
    out.push({ ...assistant, channel: "analysis", content: m.reasoning_content });
  }
  const calls = m.tool_calls ?? [];
  if (calls.length === 0) {
    out.push({ ...assistant, channel: "final", content: m.content });
  } else if (m.content !== "") {
    out.push({ ...assistant, channel: "commentary", content: m.content });
  }
  for (const call of calls) {
    out.push({
      ...assistant,
      recipient: `functions.${call.name}`,
      channel: "commentary",
      contentType: `${CONSTRAIN}json`,
      content: call.arguments,
    });
  }
  return out;
}

/** `functions.NAME` for a tool result: its own name, else the name of the call it answers. */
function toolAuthor(m: { name?: string; tool_call_id?: string }, history: DeltaHistory): string {
  const name = m.name ?? history.toolCall(m.tool_call_id ?? "")?.name ?? "unknown";
  return name.startsWith("functions.") ? name : `functions.${name}`;
}

/**
 * Harmony messages of conversation messages (no system preamble). A tool result's author is
 * looked up among the calls of `messages` first, then in `history`.
 */
export function harmonyMessages(
  messages: readonly Message[],
  history: DeltaHistory,
): HarmonyMessage[] {
  const out: HarmonyMessage[] = [];
  const calls = new Map<string, ToolCall>();
  const lookup: DeltaHistory = { toolCall: (id) => calls.get(id) ?? history.toolCall(id) };
  for (const m of messages) {
    switch (m.role) {
      case "system":
        out.push({ role: "developer", author: "developer", content: developerText(m.content, []) });
        break;
      case "user":
        out.push({ role: "user", author: "user", content: m.content });
        break;
      case "tool":
        out.push({
          role: "tool",
          author: toolAuthor(m, lookup),
          recipient: "assistant",
          channel: "commentary",
          content: m.content,
        });
        break;
      case "assistant":
        for (const call of m.tool_calls ?? []) calls.set(call.id, call);
        out.push(...answerMessages(m));
        break;
    }
  }
  return out;
}

/** Harmony's history rule: after a final answer ends the conversation, older analysis goes. */
export function dropOldAnalysis(messages: HarmonyMessage[]): HarmonyMessage[] {
  let lastAssistantFinal = false;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === "assistant") {
      lastAssistantFinal = messages[i].channel === "final";
      break;
    }
  }
  const firstFinal = messages.findIndex((m) => m.channel === "final");
  if (!lastAssistantFinal || firstFinal < 0) return messages;
  return messages.filter((m, i) => !(i < firstFinal && m.channel === "analysis"));
}

const NO_HISTORY: DeltaHistory = { toolCall: () => undefined };

/**
 * A whole conversation as harmony messages: system, developer (instructions from the leading
 * system messages, the tools), then every other message, old analysis dropped.
 */
export function harmonyConversation(
  messages: readonly Message[],
  tools: readonly ToolSpec[],
  preamble: HarmonyPreamble,
): HarmonyMessage[] {
  const out: HarmonyMessage[] = [
    { role: "system", author: "system", content: systemText(preamble, tools.length > 0) },
  ];
  let first = 0;
  while (messages[first]?.role === "system") first++;
  if (first > 0 || tools.length > 0) {
    // Several leading system messages are one, as for every family; an empty one gives no
    // instructions section.
    const instructions = messages.slice(0, first).map((m) => m.content).join(SYSTEM_JOINER);
    out.push({
      role: "developer",
      author: "developer",
      content: developerText(instructions === "" ? null : instructions, tools),
    });
  }
  out.push(...harmonyMessages(messages.slice(first), NO_HISTORY));
  return dropOldAnalysis(out);
}
