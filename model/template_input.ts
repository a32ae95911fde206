/**
 * Canonical messages → what a Hugging Face chat template expects.
 *
 * Templates are strict in ways that silently lose data: the Qwen3 template drops any role it does
 * not know (pi and Codex send their whole system prompt as `developer`; the protocol modules map
 * that to `system`), renders a system message only at index 0 together with the tools, and calls
 * string methods on `content`. So: leading system messages are merged into one, every content is
 * a string, tool calls take the OpenAI `{type, function}` shape with `arguments` kept verbatim.
 *
 * @module
 */
import type { ContentImage, Message, ToolSpec } from "../canonical/mod.ts";

export interface TemplateToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface TemplateMessage {
  role: string;
  content: string;
  reasoning_content?: string;
  tool_calls?: TemplateToolCall[];
  tool_call_id?: string;
  name?: string;
  /** User and tool content: where its images go (a vision family writes their placeholders). */
  images?: ContentImage[];
}

export interface TemplateTool {
  type: "function";
  function: { name: string; description?: string; parameters: unknown };
}

/** Separator used when several leading system messages are folded into one. */
export const SYSTEM_JOINER = "\n\n";

/**
 * Converts messages for rendering. `foldLeadingSystem` is on for a full conversation and off for
 * a delta (where a system message is never first).
 */
export function toTemplateMessages(
  messages: readonly Message[],
  foldLeadingSystem = true,
): TemplateMessage[] {
  const out: TemplateMessage[] = [];
  let i = 0;
  if (foldLeadingSystem) {
    const leading: string[] = [];
    while (i < messages.length && messages[i].role === "system") {
      leading.push(messages[i].content);
      i++;
    }
    if (leading.length > 0) out.push({ role: "system", content: leading.join(SYSTEM_JOINER) });
  }
  for (; i < messages.length; i++) out.push(toTemplateMessage(messages[i]));
  return out;
}

function toTemplateMessage(m: Message): TemplateMessage {
  switch (m.role) {
    case "system":
      return { role: m.role, content: m.content ?? "" };
    case "user":
      return m.images?.length
        ? { role: m.role, content: m.content ?? "", images: m.images }
        : { role: m.role, content: m.content ?? "" };
    case "tool": {
      const t: TemplateMessage = {
        role: "tool",
        content: m.content ?? "",
        tool_call_id: m.tool_call_id,
      };
      if (m.name !== undefined) t.name = m.name;
      if (m.images?.length) t.images = m.images;
      return t;
    }
    case "assistant": {
      const a: TemplateMessage = { role: "assistant", content: m.content ?? "" };
      if (m.reasoning_content !== undefined) a.reasoning_content = m.reasoning_content;
      if (m.tool_calls && m.tool_calls.length > 0) {
        a.tool_calls = m.tool_calls.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: c.arguments },
        }));
      }
      return a;
    }
  }
}

/** Tools in the OpenAI function shape that templates render with `tool | tojson`. */
export function toTemplateTools(tools: readonly ToolSpec[]): TemplateTool[] {
  return tools.map((t) => {
    const fn: TemplateTool["function"] = { name: t.name } as TemplateTool["function"];
    if (t.description !== undefined) fn.description = t.description;
    fn.parameters = t.parameters ?? { type: "object", properties: {} };
    return { type: "function", function: fn };
  });
}
