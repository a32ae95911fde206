/**
 * The prompt text of Gemma 4 (instruction models), thinking off, written from its chat format:
 *
 * - `<bos>`, then with a system message or tools `<|turn>system\n` + the system text trimmed +
 *   `<|tool>DECLARATION<tool|>` per tool (`declarations.ts`) + `<turn|>\n`.
 * - User (and a later system) turns: `<|turn>ROLE\n` + the text trimmed + `<turn|>\n`.
 * - A model turn: `<|turn>model\n` (not when it continues the model turn before it), the 26B/31B
 *   revision's empty thought channel `<|channel>thought\n<channel|>` (`emptyThought`) when the
 *   message has no reasoning, its reasoning as `<|channel>thought\nR\n<channel|>` while no user
 *   message follows, then each call `<|tool_call>call:NAME{ARGS}<tool_call|>` (arguments in
 *   Gemma's syntax, keys sorted), the results that answer them in the same turn
 *   (`<|tool_response>` + `response:NAME{value:<|"|>OUTPUT<|"|>}<tool_response|>` per result),
 *   then its text (trimmed, thought channels removed), then `<turn|>\n` — not where the next model
 *   message continues the turn, nor after results the conversation ends with; a call with no
 *   result yet ends with `<|tool_response>`, which the policy samples.
 * - Generation prompt: `<|turn>model\n` (+ the empty thought channel), or nothing after results
 *   (the policy goes on in the same turn).
 *
 * The text of a message with calls is written after their results: history moves text the policy
 * wrote before a call (declared in `rewritesAnswers`).
 *
 * Images (as `renderers` writes a content list, the template's parts): in a user turn each at its
 * place, `<|image>` + its `<|image|>` soft tokens + `<image|>`, every text part around it trimmed
 * on its own; a tool result's images after its `<tool_response|>`.
 *
 * @module
 */
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { toTemplateMessages } from "../../template_input.ts";
import { pythonStrip } from "../../python_json.ts";
import { parseOrderedJson } from "../ordered_json.ts";
import type { VisionPlaceholder } from "../family.ts";
import { contentWithImages, imagePlaceholder } from "../image_placeholders.ts";
import type { TemplateMessage } from "../../template_input.ts";
import type { TextRenderer } from "../text_renderer.ts";
import { gemmaDeclarations, gemmaValue } from "./declarations.ts";

/** Gemma 4's added tokens. */
export const GEMMA = {
  bos: "<bos>",
  eos: "<eos>",
  turn: "<|turn>",
  turnEnd: "<turn|>",
  channel: "<|channel>",
  channelEnd: "<channel|>",
  think: "<|think|>",
  tool: "<|tool>",
  toolEnd: "<tool|>",
  toolCall: "<|tool_call>",
  toolCallEnd: "<tool_call|>",
  toolResponse: "<|tool_response>",
  toolResponseEnd: "<tool_response|>",
  quote: '<|"|>',
} as const;

/** Gemma 4's image tokens: `<|image>` + N × `<|image|>` + `<image|>`. */
export const GEMMA4_VISION: VisionPlaceholder = {
  start: "<|image>",
  pad: "<|image|>",
  end: "<image|>",
};

const EMPTY_THOUGHT = `${GEMMA.channel}thought\n${GEMMA.channelEnd}`;

/** A message's text as the template writes it: thought channels removed, trimmed. */
function withoutThoughts(text: string): string {
  return pythonStrip(
    text.split(GEMMA.channelEnd).map((part) => part.split(GEMMA.channel)[0]).join(""),
  );
}

/** One call as history writes it. */
export function gemmaCall(name: string, args: string): string {
  return `${GEMMA.toolCall}call:${name}${
    gemmaValue(parseOrderedJson(args), false)
  }${GEMMA.toolCallEnd}`;
}

/** One result's body (after its `<|tool_response>`), through `<tool_response|>`. */
export function gemmaResult(name: string, output: string): string {
  return `response:${name}{value:${gemmaValue(output, false)}}${GEMMA.toolResponseEnd}`;
}

export interface Gemma4Options {
  /** The 26B/31B revision: the generation prompt (and history) carry an empty thought channel. */
  emptyThought: boolean;
  /** The placeholder with the processor's count; without one, images cannot be rendered. */
  vision?: VisionPlaceholder;
}

export class Gemma4TextRenderer implements TextRenderer {
  constructor(readonly options: Gemma4Options) {}

  /** A user (or later system) turn's content: trimmed text parts, images in place. */
  userContent(m: TemplateMessage): string {
    return contentWithImages(m, this.options.vision ?? GEMMA4_VISION, pythonStrip);
  }

  /** One result after its `<|tool_response>`: its body, then its images. */
  result(name: string, m: TemplateMessage): string {
    const vision = this.options.vision ?? GEMMA4_VISION;
    return gemmaResult(name, m.content) +
      (m.images ?? []).map(({ image }) => imagePlaceholder(vision, image)).join("");
  }

  /** The generation prompt of a new model turn. */
  get opening(): string {
    return `${GEMMA.turn}model\n` + (this.options.emptyThought ? EMPTY_THOUGHT : "");
  }

  render(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    { addGenerationPrompt }: { addGenerationPrompt: boolean },
  ): string {
    const msgs = toTemplateMessages(messages);
    const first = msgs[0]?.role === "system" ? 1 : 0;
    const parts: string[] = [GEMMA.bos];
    if (first || tools.length > 0) {
      parts.push(`${GEMMA.turn}system\n`, first ? pythonStrip(msgs[0].content) : "");
      for (const d of gemmaDeclarations(tools)) parts.push(GEMMA.tool, d, GEMMA.toolEnd);
      parts.push(`${GEMMA.turnEnd}\n`);
    }
    let lastUser = -1;
    msgs.forEach((m, i) => {
      if (m.role === "user") lastUser = i;
    });
    let last: "results" | "call" | null = null;
    let previous: string | null = null;
    for (let i = first; i < msgs.length; i++) {
      const m = msgs[i];
      if (m.role === "tool") continue; // written with the calls they answer
      last = null;
      if (m.role !== "assistant") {
        parts.push(`${GEMMA.turn}${m.role}\n`, this.userContent(m), `${GEMMA.turnEnd}\n`);
        previous = m.role;
        continue;
      }
      const continues = previous === "assistant";
      if (!continues) parts.push(`${GEMMA.turn}model\n`);
      const reasoning = m.reasoning_content;
      if (!continues && this.options.emptyThought && !reasoning) parts.push(EMPTY_THOUGHT);
      else if (reasoning && i > lastUser) {
        parts.push(`${GEMMA.channel}thought\n${reasoning}\n${GEMMA.channelEnd}`);
      }
      const calls = m.tool_calls ?? [];
      for (const c of calls) parts.push(gemmaCall(c.function.name, c.function.arguments));
      let j = i + 1;
      for (; msgs[j]?.role === "tool" && calls.length > 0; j++) {
        const name = calls.find((c) => c.id === msgs[j].tool_call_id)?.function.name ??
          msgs[j].name ?? "unknown";
        parts.push(GEMMA.toolResponse, this.result(name, msgs[j]));
      }
      const results = j > i + 1;
      const text = withoutThoughts(m.content);
      parts.push(text);
      const next = msgs.slice(j).find((x) => x.role !== "tool")?.role;
      if (calls.length > 0 && !results) {
        parts.push(GEMMA.toolResponse);
        last = "call";
      } else if (next === "assistant") {
        // The next model message goes on in this turn.
      } else if (!(results && !text && next === undefined)) parts.push(`${GEMMA.turnEnd}\n`);
      if (results) last = "results";
      previous = "assistant";
    }
    if (addGenerationPrompt && last === null) parts.push(this.opening);
    return parts.join("");
  }

  /** What the policy writes for `message` after the generation prompt. */
  answer(message: AssistantMessage): string {
    const [m] = toTemplateMessages([message]);
    const calls = m.tool_calls ?? [];
    const thought = m.reasoning_content
      ? `${GEMMA.channel}thought\n${m.reasoning_content}\n${GEMMA.channelEnd}`
      : "";
    if (calls.length > 0) {
      return thought + calls.map((c) => gemmaCall(c.function.name, c.function.arguments)).join("") +
        GEMMA.toolResponse;
    }
    return thought + withoutThoughts(m.content) + GEMMA.turnEnd;
  }
}
