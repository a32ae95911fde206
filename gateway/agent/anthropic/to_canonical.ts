/**
 * Anthropic Messages request → canonical request.
 *
 * The canonical form keeps only what the model sees, so every representation Claude Code uses
 * for the same history converts to the same value: `cache_control` is ignored, a string content
 * equals a single text block, thinking `signature`s and `redacted_thinking` are dropped, and the
 * `x-anthropic-billing-header` system block (which changes between sessions) is stripped. An
 * `image` block with a `base64` source is an image part (`image_input.ts`); a `url` or `file`
 * source is refused (never fetched).
 *
 * @module
 */
import type { z } from "zod";
import type {
  AssistantMessage,
  CanonicalRequest,
  Message,
  SamplingParams,
  ToolCall,
  ToolSpec,
} from "../../../canonical/mod.ts";
import { type HistoryRead, InvalidRequestError } from "../../protocol.ts";
import { describeIssues } from "../../http/mod.ts";
import { type ContentPart, remoteImage, RequestImages } from "../image_input.ts";
import {
  CONTENT_BLOCKS,
  CountTokensRequest,
  type ImageSource,
  type Message as WireMessage,
  type MessageContent,
  MessagesRequest,
  narrowBlock,
  type Tool,
  TOOL_RESULT_BLOCKS,
  type ToolResultContentBlock,
} from "./schema.ts";

/** Claude Code's attribution block; differs per version/session, carries nothing for the model. */
const BILLING_HEADER_PREFIX = "x-anthropic-billing-header:";

/** Validates and converts a `POST /v1/messages` body; throws `InvalidRequestError`. */
export function toCanonicalRequest(body: unknown): CanonicalRequest {
  return convert(parse(MessagesRequest, body));
}

/** Validates and converts a `POST /v1/messages/count_tokens` body (no `max_tokens` needed). */
export function toCanonicalCountTokensRequest(body: unknown): CanonicalRequest {
  return { ...convert(parse(CountTokensRequest, body)), stream: false };
}

function parse<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new InvalidRequestError("request body must be a JSON object");
  }
  const result = schema.safeParse(body);
  if (!result.success) {
    throw new InvalidRequestError(describeIssues(result.error.issues));
  }
  return result.data;
}

/** {@link toCanonicalRequest}, and where each wire message's canonical messages end. */
export function readMessagesHistory(body: unknown): HistoryRead {
  const ends: number[] = [];
  const request = convert(parse(MessagesRequest, body), ends);
  return { request, lead: request.messages.length - (ends.at(-1) ?? 0), ends };
}

/** Converts; `ends` (when given) gets the messages made up to each wire message, system not counted. */
function convert(req: MessagesRequest | CountTokensRequest, ends?: number[]): CanonicalRequest {
  const messages: Message[] = [];
  const images = new RequestImages();
  pushSystem(messages, req.system);
  const lead = messages.length;
  req.messages.forEach((message, i) => {
    messages.push(...convertMessage(message, images, `messages[${i}]`));
    ends?.push(messages.length - lead);
  });
  return {
    protocol: "anthropic",
    model: req.model,
    messages,
    tools: (req.tools ?? []).flatMap(convertTool),
    sampling: sampling(req),
    stream: req.stream ?? false,
    ...(images.byHash.size ? { images: images.byHash } : {}),
  };
}

/** An `image` block's source as an image part: base64 data only. */
function imageOf(source: ImageSource, images: RequestImages, where: string) {
  switch (source.type) {
    case "base64":
      if (source.data === undefined) {
        throw new InvalidRequestError(`${where}.source.data: a base64 source needs its data`);
      }
      return images.fromBase64(source.data, `${where}.source.data`);
    case "url":
      throw remoteImage(`${where}.source`, source.url ?? "a url source");
    case "file":
      throw remoteImage(`${where}.source`, `file ${source.file_id ?? ""}`.trim());
    default:
      throw new InvalidRequestError(
        `${where}.source.type: ${JSON.stringify(source.type)} is not base64, url or file`,
      );
  }
}

function pushSystem(messages: Message[], system: MessageContent | undefined): void {
  if (system === undefined) return;
  const texts = typeof system === "string" ? [system] : system.flatMap((raw) => {
    const block = narrowBlock(CONTENT_BLOCKS, raw);
    return block?.type === "text" ? [block.text] : [];
  });
  const content = texts.filter((text) => !text.startsWith(BILLING_HEADER_PREFIX)).join("\n");
  if (content !== "") messages.push({ role: "system", content });
}

function convertMessage(message: WireMessage, images: RequestImages, where: string): Message[] {
  switch (message.role) {
    case "system": {
      const out: Message[] = [];
      pushSystem(out, message.content);
      return out;
    }
    case "user":
      return convertUser(message.content, images, where);
    case "assistant":
      return [convertAssistant(message.content)];
  }
}

/**
 * Tool results come first: in the canonical (OpenAI-chat) order they answer the preceding
 * assistant turn, and any text the client put next to them is a new user message after them.
 */
function convertUser(content: MessageContent, images: RequestImages, where: string): Message[] {
  if (typeof content === "string") return [{ role: "user", content }];
  const tools: Message[] = [];
  const parts: ContentPart[] = [];
  content.forEach((raw, j) => {
    const block = narrowBlock(CONTENT_BLOCKS, raw);
    switch (block?.type) {
      case "text":
        parts.push(block.text);
        break;
      case "image":
        parts.push(imageOf(block.source, images, `${where}.content[${j}]`));
        break;
      case "document":
        parts.push(`[${block.type}]`);
        break;
      case "tool_result":
        tools.push({
          role: "tool",
          tool_call_id: block.tool_use_id,
          ...toolResult(block.content, images, `${where}.content[${j}].content`),
        });
        break;
    }
  });
  // A message of only tool results has no user text; any other message keeps its user turn.
  if (parts.length === 0 && tools.length > 0) return tools;
  return [...tools, { role: "user", ...images.content(parts) }];
}

function toolResult(
  content: string | ToolResultContentBlock[] | undefined,
  images: RequestImages,
  where: string,
) {
  if (content === undefined) return { content: "" };
  if (typeof content === "string") return { content };
  return images.content(content.flatMap((raw, j): ContentPart[] => {
    const block = narrowBlock(TOOL_RESULT_BLOCKS, raw);
    if (block === undefined) return [];
    if (block.type === "image") return [imageOf(block.source, images, `${where}[${j}]`)];
    return block.type === "text" ? [block.text] : [`[${block.type}]`];
  }));
}

function convertAssistant(content: MessageContent): AssistantMessage {
  if (typeof content === "string") return { role: "assistant", content };
  const reasoning: string[] = [];
  const texts: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const raw of content) {
    const block = narrowBlock(CONTENT_BLOCKS, raw);
    switch (block?.type) {
      case "thinking":
        reasoning.push(block.thinking);
        break;
      case "text":
        texts.push(block.text);
        break;
      case "tool_use":
        toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(block.input) });
        break;
    }
  }
  const message: AssistantMessage = { role: "assistant", content: texts.join("") };
  if (reasoning.length > 0) message.reasoning_content = reasoning.join("\n");
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return message;
}

/**
 * Server tools (`web_search_20250305`, …) run at Anthropic, not in the client, and have no
 * schema a template could render; they are dropped. Client tools keep the original in `raw`,
 * minus `cache_control` (it moves between requests and must not make two requests differ).
 */
function convertTool(tool: Tool): ToolSpec[] {
  const isServerTool = tool.type !== undefined && tool.type !== "custom";
  if (isServerTool && tool.input_schema === undefined) return [];
  const { cache_control: _, ...raw } = tool;
  const spec: ToolSpec = { name: tool.name, kind: "function", raw };
  if (tool.description !== undefined) spec.description = tool.description;
  if (tool.input_schema !== undefined) spec.parameters = tool.input_schema;
  return [spec];
}

/** Only the parameters the client set, so absent and unset compare equal. */
function sampling(req: MessagesRequest | CountTokensRequest): SamplingParams {
  const out: SamplingParams = {};
  if (req.max_tokens !== undefined) out.max_tokens = req.max_tokens;
  if (req.temperature !== undefined) out.temperature = req.temperature;
  if (req.top_p !== undefined) out.top_p = req.top_p;
  if (req.stop_sequences !== undefined) out.stop = req.stop_sequences;
  return out;
}
