/**
 * The prompt text of Qwen3-VL (Instruct), written from its chat format (ChatML, hermes JSON tool
 * calls, no reasoning):
 *
 * - A system turn when there is a system message or tools: the system text, then with tools (after
 *   a blank line when there is a system message) the tools header, one `json.dumps` line per tool
 *   and the call instructions.
 * - User and tool text verbatim; tool results as `<|im_start|>user` + per result
 *   `\n<tool_response>\nOUTPUT\n</tool_response>` + `<|im_end|>\n`. A later system message is
 *   rendered in place as a system turn (the reference drops it; agents send harness reminders).
 * - An assistant message: its text verbatim, then per call (after a newline when there is text,
 *   between two calls) `<tool_call>\n{"name": "NAME", "arguments": ARGUMENTS}\n</tool_call>`, the
 *   arguments string verbatim.
 * - Generation prompt: `<|im_start|>assistant\n`.
 *
 * An image in user or tool content goes where its part is, as `<|vision_start|>` + one
 * `<|image_pad|>` per image token + `<|vision_end|>`, its parts back to back with the text around
 * them (as the template writes a content list); the count is the image processor's
 * (`qwen_image_tokens.ts`).
 *
 * @module
 */
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { type TemplateMessage, toTemplateMessages, toTemplateTools } from "../../template_input.ts";
import { pythonJsonDumps } from "../../python_json.ts";
import type { VisionPlaceholder } from "../family.ts";
import { contentWithImages } from "../image_placeholders.ts";
import type { TextRenderer } from "../text_renderer.ts";

/** Qwen3-VL's image tokens: `<|vision_start|>` + N × `<|image_pad|>` + `<|vision_end|>`. */
export const QWEN3_VL_VISION: VisionPlaceholder = {
  start: "<|vision_start|>",
  pad: "<|image_pad|>",
  end: "<|vision_end|>",
};

// The hermes tools preamble of Qwen's templates: the model was trained on exactly this text.
const TOOLS_HEADER = "# Tools\n\nYou may call one or more functions to assist with the user " +
  "query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>";
const TOOLS_FOOTER = "\n</tools>\n\nFor each function call, return a json object with function " +
  "name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n" +
  '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>';

export interface Qwen3VlOptions {
  /** A system message after the first is left out, as `renderers` does (test reference only). */
  dropLaterSystem?: boolean;
  /** The placeholder with the processor's count; without one, images cannot be rendered. */
  vision?: VisionPlaceholder;
}

export class Qwen3VlTextRenderer implements TextRenderer {
  constructor(readonly options: Qwen3VlOptions = {}) {}

  /** An assistant turn between `<|im_start|>assistant\n` and `<|im_end|>`. */
  assistantBody(m: TemplateMessage): string {
    const calls = (m.tool_calls ?? []).map((c) =>
      `<tool_call>\n{"name": "${c.function.name}", "arguments": ${c.function.arguments}}\n` +
      "</tool_call>"
    );
    if (calls.length === 0) return m.content;
    return (m.content ? m.content + "\n" : "") + calls.join("\n");
  }

  render(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    { addGenerationPrompt }: { addGenerationPrompt: boolean },
  ): string {
    const msgs = toTemplateMessages(messages);
    const system = msgs[0]?.role === "system" ? msgs[0].content : null;
    const parts: string[] = [];
    if (tools.length > 0) {
      parts.push("<|im_start|>system\n", system === null ? "" : system + "\n\n", TOOLS_HEADER);
      for (const tool of toTemplateTools(tools)) parts.push("\n", pythonJsonDumps(tool));
      parts.push(TOOLS_FOOTER, "<|im_end|>\n");
    } else if (system !== null) {
      parts.push("<|im_start|>system\n", system, "<|im_end|>\n");
    }
    for (const [i, m] of msgs.entries()) {
      switch (m.role) {
        case "system":
          if (i > 0 && !this.options.dropLaterSystem) {
            parts.push("<|im_start|>system\n", m.content, "<|im_end|>\n");
          }
          break;
        case "user":
          parts.push("<|im_start|>user\n", this.content(m), "<|im_end|>\n");
          break;
        case "assistant":
          parts.push("<|im_start|>assistant\n", this.assistantBody(m), "<|im_end|>\n");
          break;
        case "tool":
          if (msgs[i - 1]?.role !== "tool") parts.push("<|im_start|>user");
          parts.push("\n<tool_response>\n", this.content(m), "\n</tool_response>");
          if (msgs[i + 1]?.role !== "tool") parts.push("<|im_end|>\n");
          break;
      }
    }
    if (addGenerationPrompt) parts.push("<|im_start|>assistant\n");
    return parts.join("");
  }

  /** User or tool content, its images' placeholders in place. */
  content(m: TemplateMessage): string {
    return contentWithImages(m, this.options.vision ?? QWEN3_VL_VISION);
  }

  /** What the policy writes for `message`: its turn as history writes it, `<|im_end|>` included. */
  answer(message: AssistantMessage): string {
    return this.assistantBody(toTemplateMessages([message])[0]) + "<|im_end|>";
  }
}
