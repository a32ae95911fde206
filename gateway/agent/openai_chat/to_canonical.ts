/**
 * Chat Completions request → canonical request. The canonical form is already chat-shaped, so this
 * is mostly flattening: array contents become strings (images become image parts, from `data:`
 * URLs; a remote URL is refused, never fetched), `developer` becomes `system`, tool calls lose
 * their wire envelope. Nothing is merged or reordered here: system-message placement is the
 * template's business, and history matching needs the messages one-to-one with the wire.
 *
 * @module
 */
import type {
  CanonicalRequest,
  Message,
  SamplingParams,
  ToolCall,
  ToolSpec,
} from "../../../canonical/mod.ts";
import { type HistoryRead, InvalidRequestError } from "../../protocol.ts";
import { describeIssues } from "../../http/mod.ts";
import { type ContentPart, RequestImages } from "../image_input.ts";
import {
  type ChatContent,
  type ChatMessage,
  type ChatRequest,
  ChatRequestSchema,
  type ChatTool,
} from "./schema.ts";

/**
 * What a `custom` (free-form) tool looks like to the template: one string argument `input`.
 * A fresh object per call, so no request can alter another's tool list.
 */
function customToolParameters(): Record<string, unknown> {
  return { type: "object", properties: { input: { type: "string" } }, required: ["input"] };
}

/** {@link toCanonicalRequest}, and where each wire message's canonical one ends (one each). */
export function readChatHistory(body: unknown): HistoryRead {
  const request = toCanonicalRequest(body);
  return { request, lead: 0, ends: request.messages.map((_, i) => i + 1) };
}

/** Validates a Chat Completions body and converts it; throws `InvalidRequestError`. */
export function toCanonicalRequest(body: unknown): CanonicalRequest {
  const parsed = ChatRequestSchema.safeParse(body);
  if (!parsed.success) {
    throw new InvalidRequestError(
      `invalid chat completions request: ${describeIssues(parsed.error.issues)}`,
    );
  }
  const req = parsed.data;
  const images = new RequestImages();
  return {
    protocol: "chat",
    model: req.model,
    messages: req.messages.map((m, i) => toMessage(m, images, `messages[${i}]`)),
    tools: (req.tools ?? []).flatMap(toToolSpec),
    sampling: toSampling(req),
    stream: req.stream ?? false,
    includeUsage: req.stream_options?.include_usage === true,
    ...(images.byHash.size ? { images: images.byHash } : {}),
  };
}

/** Text parts joined with newlines; media other than images only leaves a marker. */
function contentParts(
  content: ChatContent | undefined,
  images: RequestImages | null,
  where: string,
): ContentPart[] {
  if (content === null || content === undefined) return [];
  if (typeof content === "string") return [content];
  return content.map((part, j) => {
    switch (part.type) {
      case "text":
        return part.text;
      case "refusal":
        return part.refusal;
      case "image_url": {
        const at = `${where}.content[${j}].image_url`;
        if (!images) {
          throw new InvalidRequestError(`${at}: images are shown in user and tool messages only`);
        }
        const url = part.image_url;
        return images.fromUrl(typeof url === "string" ? url : url.url, at);
      }
      case "input_audio":
        return "[audio]";
      case "file":
        return "[file]";
    }
  });
}

/** Content as text (system and assistant messages: an image there is refused). */
function flattenContent(content: ChatContent | undefined, where: string): string {
  return contentParts(content, null, where).join("\n");
}

function toMessage(message: ChatMessage, images: RequestImages, where: string): Message {
  const withImages = () => images.content(contentParts(message.content, images, where));
  switch (message.role) {
    case "system":
    case "developer":
      return { role: "system", content: flattenContent(message.content, where) };
    case "user":
      return { role: "user", ...withImages() };
    case "tool":
      return { role: "tool", ...withImages(), tool_call_id: message.tool_call_id };
    case "function":
      return { role: "tool", ...withImages(), tool_call_id: message.name };
    case "assistant": {
      const reasoning = message.reasoning_content ||
        (typeof message.reasoning === "string" ? message.reasoning : "");
      const calls: ToolCall[] = (message.tool_calls ?? []).map((call) =>
        call.type === "custom"
          ? {
            id: call.id,
            name: call.custom.name,
            arguments: JSON.stringify({ input: call.custom.input }),
            kind: "custom",
          }
          : { id: call.id, name: call.function.name, arguments: call.function.arguments }
      );
      if (message.function_call) {
        // Legacy calls have no id; the legacy `function` result links back by name.
        const { name, arguments: args } = message.function_call;
        calls.push({ id: name, name, arguments: args });
      }
      return {
        role: "assistant",
        content: flattenContent(message.content, where),
        ...(reasoning ? { reasoning_content: reasoning } : {}),
        ...(calls.length ? { tool_calls: calls } : {}),
      };
    }
  }
}

/** Function and custom tools are kept; other kinds (e.g. hosted tools) cannot be rendered. */
function toToolSpec(tool: ChatTool): ToolSpec[] {
  if (tool.type === "function" && tool.function) {
    const { name, description, parameters } = tool.function;
    return [{
      name,
      ...(description ? { description } : {}),
      parameters: parameters ?? { type: "object", properties: {} },
      kind: "function",
      raw: tool,
    }];
  }
  if (tool.type === "custom" && tool.custom) {
    const { name, description } = tool.custom;
    return [{
      name,
      ...(description ? { description } : {}),
      parameters: customToolParameters(),
      kind: "custom",
      raw: tool,
    }];
  }
  return [];
}

/** `max_completion_tokens` is the current name; `max_tokens` the deprecated one. */
function toSampling(req: ChatRequest): SamplingParams {
  const sampling: SamplingParams = {};
  const maxTokens = req.max_completion_tokens ?? req.max_tokens;
  if (maxTokens != null) sampling.max_tokens = maxTokens;
  if (req.temperature != null) sampling.temperature = req.temperature;
  if (req.top_p != null) sampling.top_p = req.top_p;
  if (req.stop != null) sampling.stop = typeof req.stop === "string" ? [req.stop] : req.stop;
  return sampling;
}
