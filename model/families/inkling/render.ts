/**
 * The prompt text of Thinking Machines' Inkling and Inkling-Small, written from their chat format:
 * token-delimited segments `<|message_ROLE|>[NAME]<|content_KIND|>BODY<|end_message|>`, every
 * marker an added token (`INK`), no BOS.
 *
 * - With tools, first `<|message_system|>tool_declare<|content_xml|>` + the tool list as compact,
 *   key-sorted JSON (`description`, `name`, `parameters`, `type` per tool) + `<|end_message|>`.
 * - System and user messages: `<|message_ROLE|><|content_text|>TEXT<|end_message|>` (empty text
 *   too). Before the first other message, the effort segment
 *   `<|message_system|><|content_text|>Thinking effort level: N<|end_message|>`.
 * - An assistant message: `<|message_model|>`, then its reasoning as a
 *   `<|content_thinking|>R<|end_message|>` segment (when there is any), its text as a
 *   `<|content_text|>` segment (always), each call as
 *   `NAME<|content_invoke_tool_json|>{"name":"NAME","args":{…}}<|end_message|>` (arguments
 *   compact and key-sorted), every segment after the first opened by `<|message_model|>` again,
 *   then `<|content_model_end_sampling|>`. Every turn keeps its reasoning.
 * - A tool result: `<|message_tool|>NAME<|content_text|>OUTPUT<|end_message|>`, NAME the tool of
 *   the call it answers.
 * - Generation prompt: `<|message_model|>`.
 *
 * An image goes where its part is, as `<|content_image|>` + pads + `<|end_message|>` in its own
 * segment (`INKLING_VISION`; not rendered yet).
 *
 * @module
 */
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { type TemplateMessage, toTemplateMessages, toTemplateTools } from "../../template_input.ts";
import { pythonJsonDumps } from "../../python_json.ts";
import { parseOrderedJson } from "../ordered_json.ts";
import type { VisionPlaceholder } from "../family.ts";
import type { TextRenderer } from "../text_renderer.ts";

/** Inkling's markers (all added tokens). */
export const INK = {
  user: "<|message_user|>",
  model: "<|message_model|>",
  system: "<|message_system|>",
  tool: "<|message_tool|>",
  text: "<|content_text|>",
  thinking: "<|content_thinking|>",
  xml: "<|content_xml|>",
  invoke: "<|content_invoke_tool_json|>",
  image: "<|content_image|>",
  end: "<|end_message|>",
  endSampling: "<|content_model_end_sampling|>",
} as const;

/** Where an Inkling image goes: its own segment of pads (the processor counts them). */
export const INKLING_VISION: VisionPlaceholder = {
  start: INK.image,
  pad: "<|unused_200054|>",
  end: INK.end,
};

/** The effort labels the template maps to its number (`reasoning_effort`). */
export const INKLING_EFFORTS: Record<string, string> = {
  none: "0",
  minimal: "0.1",
  low: "0.2",
  medium: "0.7",
  high: "0.9",
  max: "0.99",
};

const COMPACT = { separators: [",", ":"] as const, sortKeys: true };

/** A call's JSON as history writes it: `{"name":…,"args":…}`, compact, keys sorted. */
export function inklingInvoke(name: string, args: string): string {
  return `{"name":${pythonJsonDumps(name)},"args":${
    pythonJsonDumps(parseOrderedJson(args), COMPACT)
  }}`;
}

export class InklingTextRenderer implements TextRenderer {
  /** @param effort the effort segment's number as the template prints it (`0.9`) */
  constructor(readonly effort: string) {}

  /** An assistant turn after its first `<|message_model|>`, through the end-of-sampling token. */
  assistantBody(m: TemplateMessage): string {
    const segments: string[] = [];
    if (m.reasoning_content) segments.push(INK.thinking + m.reasoning_content + INK.end);
    segments.push(INK.text + m.content + INK.end);
    for (const c of m.tool_calls ?? []) {
      const { name, arguments: args } = c.function;
      segments.push(name + INK.invoke + inklingInvoke(name, args) + INK.end);
    }
    return segments.join(INK.model) + INK.endSampling;
  }

  render(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    { addGenerationPrompt }: { addGenerationPrompt: boolean },
  ): string {
    const msgs = toTemplateMessages(messages);
    const parts: string[] = [];
    if (tools.length > 0) {
      const specs = toTemplateTools(tools).map(({ type, function: f }) => ({
        description: f.description ?? "",
        name: f.name,
        parameters: f.parameters ?? {},
        type: type ?? "function",
      }));
      parts.push(INK.system, "tool_declare", INK.xml, pythonJsonDumps(specs, COMPACT), INK.end);
    }
    const effort = INK.system + INK.text + `Thinking effort level: ${this.effort}` + INK.end;
    let effortWritten = false;
    for (const [i, m] of msgs.entries()) {
      if (!effortWritten && m.role !== "system") {
        parts.push(effort);
        effortWritten = true;
      }
      switch (m.role) {
        case "system":
        case "user":
          parts.push(m.role === "user" ? INK.user : INK.system, INK.text, m.content, INK.end);
          break;
        case "assistant":
          parts.push(INK.model, this.assistantBody(m));
          break;
        case "tool":
          parts.push(INK.tool, m.name ?? callName(msgs, i), INK.text, m.content, INK.end);
          break;
      }
    }
    if (!effortWritten) parts.push(effort);
    if (addGenerationPrompt) parts.push(INK.model);
    return parts.join("");
  }

  /** What the policy writes for `message` after `<|message_model|>`. */
  answer(message: AssistantMessage): string {
    return this.assistantBody(toTemplateMessages([message])[0]);
  }
}

/** The name of the call tool message `i` answers, from the latest call with its id. */
function callName(msgs: readonly TemplateMessage[], i: number): string {
  const id = msgs[i].tool_call_id;
  for (let j = i - 1; j >= 0; j--) {
    const call = msgs[j].tool_calls?.find((c) => c.id === id);
    if (call) return call.function.name;
  }
  return "";
}
