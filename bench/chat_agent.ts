/**
 * The agent side of load drivers: one OpenAI Chat call over HTTP with the whole history, as pi,
 * OpenCode and Qwen Code send it, streamed (SSE, the agents' default) or not. The answer comes back
 * as the wire message the agent appends to its history.
 *
 * @module
 */
import { parseSseText } from "../generation/mod.ts";
import { agentSteps, SYSTEM_PROMPT, TASK, TOOLS } from "./agent_history.ts";
import { loadCapture } from "../gateway/agent/anthropic/__fixtures__/load.ts";

/** A Chat wire message, as the agent sends and receives it. */
export type WireMessage = Record<string, unknown>;

export interface ChatAnswer {
  message: WireMessage;
  promptTokens: number;
}

const JSON_HEADERS = { "content-type": "application/json" };

const WIRE_TOOLS = TOOLS.map((t) => ({
  type: "function",
  function: { name: t.name, description: t.description, parameters: t.parameters },
}));

/**
 * The bench's tools followed by Claude Code 2.1.330's own (from its recorded first request,
 * `gateway/agent/anthropic/__fixtures__`), as Chat tools: ~48 kB of tool JSON, what a real
 * coding agent sends with every request, where the bench's three alone are ~1 kB.
 */
export function claudeCodeTools(): object[] {
  const [first] = loadCapture();
  const theirs = (first.body.tools as { name: string; description: string; input_schema: object }[])
    .map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.input_schema },
    }));
  return [...WIRE_TOOLS, ...theirs];
}

/**
 * A Chat request body with the bench's tools (or `tools`); streamed requests ask for the usage
 * chunk, as OpenAI's SDK users do.
 */
export function chatBody(
  messages: object[],
  stream: boolean,
  tools: object[] = WIRE_TOOLS,
): string {
  return JSON.stringify({
    model: "rollgate-policy",
    messages,
    tools,
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
  });
}

interface ToolCallDelta {
  index: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

/** The message an SSE Chat answer spells, assembled from its deltas. */
export function messageFromChatEvents(sse: string): ChatAnswer {
  let content = "", reasoning = "", promptTokens = 0;
  const calls: { id: string; type: "function"; function: { name: string; arguments: string } }[] =
    [];
  for (const { data } of parseSseText(sse).events) {
    if (data === "[DONE]") continue;
    const chunk = JSON.parse(data);
    if (chunk.error) throw new Error(`in-stream error: ${JSON.stringify(chunk.error)}`);
    if (chunk.usage) promptTokens = chunk.usage.prompt_tokens;
    const delta = chunk.choices?.[0]?.delta;
    if (!delta) continue;
    content += delta.content ?? "";
    reasoning += delta.reasoning_content ?? "";
    for (const d of (delta.tool_calls ?? []) as ToolCallDelta[]) {
      const call = calls[d.index] ??= {
        id: "",
        type: "function",
        function: { name: "", arguments: "" },
      };
      call.id += d.id ?? "";
      call.function.name += d.function?.name ?? "";
      call.function.arguments += d.function?.arguments ?? "";
    }
  }
  const message: WireMessage = { role: "assistant", content };
  if (reasoning) message.reasoning_content = reasoning;
  if (calls.length) message.tool_calls = calls;
  return { message, promptTokens };
}

/** POSTs `body` (a Chat request, `stream` as it says) to the rollout and reads the answer. */
export async function chatCall(
  url: string,
  rollout: string,
  token: string,
  body: string,
  stream: boolean,
  timeoutMs = 600_000,
): Promise<ChatAnswer> {
  const res = await fetch(`${url}/rollout/${rollout}/v1/chat/completions`, {
    method: "POST",
    headers: { ...JSON_HEADERS, authorization: `Bearer ${token}` },
    body,
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`turn: ${res.status} ${text.slice(0, 300)}`);
  if (stream) return messageFromChatEvents(text);
  const answer = JSON.parse(text);
  return { message: answer.choices[0].message, promptTokens: answer.usage.prompt_tokens };
}

/** Creates a rollout through the trainer API; its id and the agent's token. */
export async function createRollout(
  url: string,
  id: string,
  adminToken?: string,
): Promise<{ id: string; token: string }> {
  const res = await fetch(`${url}/api/rollouts`, {
    method: "POST",
    headers: { ...JSON_HEADERS, ...(adminToken ? { authorization: `Bearer ${adminToken}` } : {}) },
    body: JSON.stringify({ id }),
    signal: AbortSignal.timeout(60_000),
  });
  if (!res.ok) throw new Error(`create rollout: ${res.status} ${await res.text()}`);
  return await res.json();
}

/**
 * An agent history of at least `chars` characters of tool loops (the agent's own loops); `chars`
 * in the answer is how many it has (up to one loop more).
 */
export function chatHistory(
  seed: number,
  chars: number,
): { messages: WireMessage[]; lastCallId: string; chars: number } {
  const messages: WireMessage[] = [{ ...SYSTEM_PROMPT }, { ...TASK }];
  let size = 0, n = 0, lastCallId = "";
  for (const step of agentSteps(seed, [10, 70])) {
    lastCallId = `call_${seed}_${n++}`;
    const args = JSON.stringify(step.args);
    messages.push({
      role: "assistant",
      content: step.reasoning,
      tool_calls: [{
        id: lastCallId,
        type: "function",
        function: { name: step.tool, arguments: args },
      }],
    });
    messages.push({ role: "tool", tool_call_id: lastCallId, content: step.output });
    size += step.reasoning.length + args.length + step.output.length;
    if (size >= chars) return { messages, lastCallId, chars: size };
  }
  throw new Error("unreachable");
}
