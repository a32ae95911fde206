/**
 * Zod schemas for Anthropic Messages request bodies (`POST /v1/messages` and
 * `/v1/messages/count_tokens`).
 *
 * Everything is a loose object: clients send fields the gateway does not interpret
 * (`cache_control`, `defer_loading`, `eager_input_streaming`, `context_management`, `metadata`,
 * `thinking`, `output_config`, new betas…) and they must pass validation untouched. Only the
 * fields the conversion reads are checked. Content blocks of a type this module does not know
 * (server tool results, search results, future block types) are accepted as `{type, …}` so a new
 * client version does not turn into 400s.
 *
 * @module
 */
import { z } from "zod";
import { TemperatureSchema, TopPSchema } from "../../sampling_schema.ts";

export const TextBlock = z.looseObject({ type: z.literal("text"), text: z.string() });
/** An image's `source`: `base64` (`media_type`, `data`), `url` or `file` (`file_id`). */
export const ImageSource = z.looseObject({
  type: z.string(),
  data: z.string().optional(),
  url: z.string().optional(),
  file_id: z.string().optional(),
});
export type ImageSource = z.output<typeof ImageSource>;
export const ImageBlock = z.looseObject({ type: z.literal("image"), source: ImageSource });
export const DocumentBlock = z.looseObject({ type: z.literal("document") });
export const ThinkingBlock = z.looseObject({
  type: z.literal("thinking"),
  thinking: z.string(),
  signature: z.string().optional(),
});
export const RedactedThinkingBlock = z.looseObject({ type: z.literal("redacted_thinking") });
export const ToolUseBlock = z.looseObject({
  type: z.literal("tool_use"),
  id: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
});

/** Any block whose `type` is not one of the known ones; kept as is and ignored by conversion. */
export interface OtherBlock {
  type: string;
  [key: string]: unknown;
}

type BlockSchemas = Record<string, z.ZodType<{ type: string }>>;

/**
 * A block whose schema is chosen by its `type`; unknown types pass through as `OtherBlock`.
 *
 * Why not `z.union`: a union reports "Invalid input" for the whole block when a known block is
 * malformed, and a catch-all member would swallow malformed known blocks. Dispatching on `type`
 * keeps errors precise (`messages[1].content[0].text: expected string`).
 */
function blockByType<T extends BlockSchemas>(known: T) {
  return z.looseObject({ type: z.string() }).transform((block, ctx) => {
    const schema = Object.hasOwn(known, block.type) ? known[block.type] : undefined;
    if (!schema) return block as OtherBlock;
    const parsed = schema.safeParse(block);
    if (parsed.success) return parsed.data as z.output<T[keyof T]>;
    for (const issue of parsed.error.issues) {
      ctx.issues.push({ ...issue, input: block } as (typeof ctx.issues)[number]);
    }
    return z.NEVER;
  });
}

/**
 * Narrows a block parsed by `blockByType(known)` to its validated type, or `undefined` for a block
 * of an unknown type. (A plain `switch (block.type)` cannot narrow: `OtherBlock.type` is `string`.)
 */
export function narrowBlock<T extends BlockSchemas>(
  known: T,
  block: { type: string },
): z.output<T[keyof T]> | undefined {
  return Object.hasOwn(known, block.type) ? block as z.output<T[keyof T]> : undefined;
}

/** Block types allowed inside a `tool_result`'s `content` array. */
export const TOOL_RESULT_BLOCKS = { text: TextBlock, image: ImageBlock, document: DocumentBlock };
export const ToolResultContentBlock = blockByType(TOOL_RESULT_BLOCKS);
export type ToolResultContentBlock = z.output<typeof ToolResultContentBlock>;

export const ToolResultBlock = z.looseObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(ToolResultContentBlock)]).optional(),
  is_error: z.boolean().optional(),
});

/** Block types of message content. */
export const CONTENT_BLOCKS = {
  text: TextBlock,
  image: ImageBlock,
  document: DocumentBlock,
  thinking: ThinkingBlock,
  redacted_thinking: RedactedThinkingBlock,
  tool_use: ToolUseBlock,
  tool_result: ToolResultBlock,
};

/** A content block of a message. */
export const ContentBlock = blockByType(CONTENT_BLOCKS);
export type ContentBlock = z.output<typeof ContentBlock>;

/** `content` of a message: Claude Code sends a string and a single text block interchangeably. */
export const MessageContent = z.union([z.string(), z.array(ContentBlock)]);
export type MessageContent = z.output<typeof MessageContent>;

/** `role: "system"` is not in the public API but Claude Code sends it for unknown model ids. */
export const Message = z.looseObject({
  role: z.enum(["user", "assistant", "system"]),
  content: MessageContent,
});
export type Message = z.output<typeof Message>;

/**
 * A tool definition. Client tools have `input_schema`; server tools (`web_search_20250305`, …)
 * have a `type` instead. Other fields (`defer_loading`, `cache_control`, …) pass through.
 */
export const Tool = z.looseObject({
  name: z.string(),
  type: z.string().optional(),
  description: z.string().optional(),
  input_schema: z.unknown().optional(),
});
export type Tool = z.output<typeof Tool>;

/** Top-level `system`: a string or text blocks. */
export const System = z.union([z.string(), z.array(TextBlock)]);

/** Body of `POST /v1/messages`. */
export const MessagesRequest = z.looseObject({
  model: z.string(),
  messages: z.array(Message),
  system: System.optional(),
  tools: z.array(Tool).optional(),
  max_tokens: z.number().int().positive(),
  temperature: TemperatureSchema.optional(),
  top_p: TopPSchema.optional(),
  stop_sequences: z.array(z.string()).optional(),
  stream: z.boolean().optional(),
});
export type MessagesRequest = z.output<typeof MessagesRequest>;

/** Body of `POST /v1/messages/count_tokens`: the same without `max_tokens` (and `stream`). */
export const CountTokensRequest = MessagesRequest.extend({
  max_tokens: z.number().int().positive().optional(),
});
export type CountTokensRequest = z.output<typeof CountTokensRequest>;
