/**
 * Responses request → canonical request. The Responses API spreads one assistant turn over several
 * items (`reasoning`, `message`, `function_call`, …); the canonical form, like a chat template,
 * wants one assistant message per turn, so consecutive assistant-side items are grouped back
 * together. Opaque echoes (`encrypted_content`, item ids, statuses) are dropped: they never reach
 * the model, and history matching compares only what the model sees. An `input_image` with a
 * `data:` URL is an image part of a user message or a tool output; a remote URL or a `file_id` is
 * refused (never fetched).
 *
 * @module
 */
import type {
  AssistantMessage,
  CanonicalRequest,
  Message,
  SamplingParams,
  ToolSpec,
} from "../../../canonical/mod.ts";
import type { HistoryRead } from "../../protocol.ts";
import {
  type ContentPart,
  type InputItem,
  parseResponsesRequest,
  type ResponsesRequest,
  type Tool,
} from "./schema.ts";
import { InvalidRequestError } from "../../protocol.ts";
import { type ContentPart as Part, remoteImage, RequestImages } from "../image_input.ts";

/** The argument schema a free-form (`custom`) tool gets: one raw string `input`. */
export const CUSTOM_TOOL_PARAMETERS = {
  type: "object",
  properties: { input: { type: "string" } },
  required: ["input"],
};

/**
 * Message or tool-output content as the model sees it: text parts, and images where `images` is
 * given (user messages, tool outputs; elsewhere an image is refused).
 */
function contentParts(
  content: string | ContentPart[],
  images: RequestImages | null,
  where: string,
): Part[] {
  if (typeof content === "string") return [content];
  return content.flatMap((part, j): Part[] => {
    switch (part.type) {
      case "input_text":
      case "output_text":
      case "text":
        return [part.text];
      case "refusal":
        return [part.refusal];
      case "input_image": {
        const at = `${where}[${j}]`;
        if (!images) {
          throw new InvalidRequestError(
            `${at}: images are shown in user messages and tool outputs only`,
          );
        }
        if (part.image_url) return [images.fromUrl(part.image_url, `${at}.image_url`)];
        throw remoteImage(at, part.file_id ? `file ${part.file_id}` : "no image_url");
      }
      case "input_file":
        return ["[file]"];
      default:
        return [];
    }
  });
}

/** Content as text only (system and assistant messages). */
function contentText(content: string | ContentPart[], where: string): string {
  return contentParts(content, null, where).join("\n");
}

type Reasoning = Extract<InputItem, { type: "reasoning" }>;

/** The summary text when there is one, else the raw `reasoning_text` parts. */
function reasoningText(item: Reasoning): string {
  const summary = (item.summary ?? []).map((s) => s.text).join("\n");
  if (summary !== "") return summary;
  return (item.content ?? []).filter((c) => c.type === "reasoning_text").map((c) => c.text)
    .join("\n");
}

/**
 * Converts the input items, grouping each run of assistant-side items into one message; `ends`
 * (when given) gets, per item, the messages made so far, or -1 inside a run (the next item may
 * still join the group).
 */
function toMessages(
  input: ResponsesRequest["input"],
  images: RequestImages,
  ends?: number[],
): Message[] {
  if (typeof input === "string") return [{ role: "user", content: input }];
  const messages: Message[] = [];
  let group: AssistantMessage | undefined;
  /** The current assistant group, or a fresh one when `startNew` says it is already used. */
  const groupFor = (startNew: (g: AssistantMessage) => boolean): AssistantMessage => {
    if (!group || startNew(group)) {
      group = { role: "assistant", content: "" };
      messages.push(group);
    }
    return group;
  };
  const hasOutput = (g: AssistantMessage) => g.content !== "" || (g.tool_calls?.length ?? 0) > 0;

  for (const [i, item] of input.entries()) {
    const where = `input[${i}]`;
    switch (item.type) {
      case "reasoning": {
        const g = groupFor((g) => hasOutput(g) || g.reasoning_content !== undefined);
        const text = reasoningText(item);
        if (text !== "") g.reasoning_content = text;
        break;
      }
      case "function_call":
      case "custom_tool_call": {
        const g = groupFor(() => false);
        g.tool_calls ??= [];
        g.tool_calls.push(
          item.type === "function_call"
            ? { id: item.call_id, name: item.name, arguments: item.arguments }
            : {
              id: item.call_id,
              name: item.name,
              arguments: JSON.stringify({ input: item.input }),
              kind: "custom",
            },
        );
        break;
      }
      case "message": {
        if (item.role === "assistant") {
          groupFor(hasOutput).content = contentText(item.content, `${where}.content`);
          break;
        }
        group = undefined;
        if (item.role === "user") {
          const parts = contentParts(item.content, images, `${where}.content`);
          messages.push({ role: "user", ...images.content(parts) });
        } else {
          messages.push({ role: "system", content: contentText(item.content, `${where}.content`) });
        }
        break;
      }
      case "function_call_output":
      case "custom_tool_call_output":
        group = undefined;
        messages.push({
          role: "tool",
          tool_call_id: item.call_id,
          ...images.content(contentParts(item.output, images, `${where}.output`)),
        });
        break;
      case "ignored":
        // Unknown item types (web_search_call, item_reference, …) carry nothing we can render and do
        // not interrupt an assistant turn.
        break;
    }
    ends?.push(group === undefined ? messages.length : -1);
  }
  return messages;
}

function functionSpec(tool: Extract<Tool, { type: "function" }>): ToolSpec {
  return {
    name: tool.name,
    ...(tool.description != null && { description: tool.description }),
    ...(tool.parameters !== undefined && { parameters: tool.parameters }),
    kind: "function",
    raw: tool,
  };
}

/** Tools the model can call: functions, custom tools and the functions inside namespaces. */
function toToolSpecs(tools: Tool[]): ToolSpec[] {
  return tools.flatMap((tool): ToolSpec[] => {
    switch (tool.type) {
      case "function":
        return [functionSpec(tool)];
      case "custom":
        return [{
          name: tool.name,
          ...(tool.description != null && { description: tool.description }),
          parameters: CUSTOM_TOOL_PARAMETERS,
          kind: "custom",
          raw: tool,
        }];
      case "namespace":
        return tool.tools.flatMap((t) => t.type === "function" ? [functionSpec(t)] : []);
      default:
        return [];
    }
  });
}

function toSampling(body: ResponsesRequest): SamplingParams {
  const sampling: SamplingParams = {};
  if (body.max_output_tokens != null) sampling.max_tokens = body.max_output_tokens;
  if (body.temperature != null) sampling.temperature = body.temperature;
  if (body.top_p != null) sampling.top_p = body.top_p;
  return sampling;
}

/** {@link toCanonicalRequest}, and where each input item's messages end. */
export function readResponsesHistory(body: unknown): HistoryRead {
  const ends: number[] = [];
  return { ...convert(body, ends), ends };
}

/**
 * Validates a Responses request body and converts it to the canonical request.
 * Throws `InvalidRequestError` (message names the offending field) when the body does not fit.
 */
export function toCanonicalRequest(body: unknown): CanonicalRequest {
  return convert(body).request;
}

function convert(body: unknown, ends?: number[]): { request: CanonicalRequest; lead: number } {
  const parsed = parseResponsesRequest(body);
  const instructions: Message[] = parsed.instructions
    ? [{ role: "system", content: parsed.instructions }]
    : [];
  const images = new RequestImages();
  const request: CanonicalRequest = {
    protocol: "responses",
    model: parsed.model,
    messages: [...instructions, ...toMessages(parsed.input, images, ends)],
    tools: toToolSpecs(parsed.tools ?? []),
    sampling: toSampling(parsed),
    stream: parsed.stream ?? false,
    ...(images.byHash.size ? { images: images.byHash } : {}),
  };
  return { request, lead: instructions.length };
}
