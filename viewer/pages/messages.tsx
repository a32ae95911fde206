/**
 * A turn's messages in the words of the protocol the agent spoke: Claude Code's `thinking`,
 * `tool_use` and `tool_result` blocks, Chat's `reasoning_content`, `tool_calls` and `tool`
 * messages, Responses' `reasoning`, `function_call` and `function_call_output` items. Every
 * text is shown in full.
 *
 * @module
 */
import type { FC } from "hono/jsx";
import type { AssistantMessage, Message, ToolCall } from "../../canonical/mod.ts";

interface Terms {
  system: string;
  user: string;
  reasoning: string;
  text: string;
  call(call: ToolCall): string;
  result: string;
}

const TERMS: Record<string, Terms> = {
  anthropic: {
    system: "system",
    user: "user · text",
    reasoning: "assistant · thinking",
    text: "assistant · text",
    call: (c) => `assistant · tool_use ${c.name}`,
    result: "user · tool_result",
  },
  chat: {
    system: "system / developer",
    user: "user",
    reasoning: "assistant · reasoning_content",
    text: "assistant · content",
    call: (c) => `assistant · tool_calls · function ${c.name}`,
    result: "tool",
  },
  responses: {
    system: "instructions / developer",
    user: "message · user",
    reasoning: "reasoning",
    text: "message · assistant · output_text",
    call: (c) => `${c.kind === "custom" ? "custom_tool_call" : "function_call"} ${c.name}`,
    result: "function_call_output",
  },
};

export function termsOf(protocol: string): Terms {
  return TERMS[protocol] ?? TERMS.chat;
}

function pretty(args: string): string {
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return args;
  }
}

const Block: FC<{ kind: string; role: string; note?: string; text: string }> = (
  { kind, role, note, text },
) => (
  <div class={`msg ${kind}`}>
    <div class="role">
      {role}
      {note ? <span class="muted">{`  ${note}`}</span> : null}
    </div>
    <pre>{text}</pre>
  </div>
);

export const Assistant: FC<{ m: AssistantMessage; terms: Terms }> = ({ m, terms }) => (
  <div>
    {m.reasoning_content
      ? <Block kind="reasoning" role={terms.reasoning} text={m.reasoning_content} />
      : null}
    {m.content ? <Block kind="assistant" role={terms.text} text={m.content} /> : null}
    {(m.tool_calls ?? []).map((c) => (
      <Block kind="call" role={terms.call(c)} note={c.id} text={pretty(c.arguments)} />
    ))}
  </div>
);

/** `messages` in order; tool results are named after their calls, found in `history`. */
export const Messages: FC<
  { messages: readonly Message[]; history: readonly Message[]; protocol: string }
> = ({ messages, history, protocol }) => {
  const terms = termsOf(protocol);
  const names = new Map<string, string>();
  for (const m of history) {
    if (m.role === "assistant") { for (const c of m.tool_calls ?? []) names.set(c.id, c.name); }
  }
  return (
    <div>
      {messages.map((m) =>
        m.role === "assistant" ? <Assistant m={m} terms={terms} /> : m.role === "tool"
          ? (
            <Block
              kind="tool"
              role={`${terms.result}${
                names.has(m.tool_call_id) ? ` (${names.get(m.tool_call_id)})` : ""
              }`}
              note={m.tool_call_id}
              text={m.content}
            />
          )
          : (
            <Block
              kind={m.role}
              role={m.role === "system" ? terms.system : terms.user}
              text={m.content}
            />
          )
      )}
    </div>
  );
};
