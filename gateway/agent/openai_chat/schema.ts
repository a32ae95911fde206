/**
 * Zod schemas for an OpenAI Chat Completions request (`POST /v1/chat/completions`).
 *
 * Every object is loose: clients send fields the gateway has no use for (`store`,
 * `reasoning_effort`, `metadata`, `parallel_tool_calls`, `strict` on tools, …) and a request must
 * never fail because of them. Only the fields the conversion reads are typed, and those strictly
 * enough that a malformed body is rejected with a path to the offending field instead of being
 * half-converted. Optional fields also accept `null`, which SDKs send for "unset".
 *
 * @module
 */
import { z } from "zod";
import { TemperatureSchema, TopPSchema } from "../../sampling_schema.ts";

/**
 * One element of an array `content`: text, an image (`image_url.url`, a `data:` URL; a bare
 * string is taken too), or a kind that only leaves a placeholder behind (audio, files).
 */
export const ContentPartSchema = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text"), text: z.string() }),
  z.looseObject({ type: z.literal("refusal"), refusal: z.string() }),
  z.looseObject({
    type: z.literal("image_url"),
    image_url: z.union([z.string(), z.looseObject({ url: z.string() })]),
  }),
  z.looseObject({ type: z.literal("input_audio") }),
  z.looseObject({ type: z.literal("file") }),
]);

/** `content` as the spec allows it: a string, `null`, or an array of parts. */
export const ContentSchema = z.union([z.string(), z.null(), z.array(ContentPartSchema)]);

/** An assistant tool call as echoed in the history. */
export const ToolCallSchema = z.discriminatedUnion("type", [
  z.looseObject({
    id: z.string(),
    type: z.literal("function"),
    function: z.looseObject({ name: z.string(), arguments: z.string() }),
  }),
  z.looseObject({
    id: z.string(),
    type: z.literal("custom"),
    custom: z.looseObject({ name: z.string(), input: z.string() }),
  }),
]);

const SystemMessageSchema = z.looseObject({
  role: z.enum(["system", "developer"]),
  content: ContentSchema,
});

const UserMessageSchema = z.looseObject({ role: z.literal("user"), content: ContentSchema });

const AssistantMessageSchema = z.looseObject({
  role: z.literal("assistant"),
  content: ContentSchema.optional(),
  reasoning_content: z.string().nullish(),
  /** Some servers name the field `reasoning`; other shapes of it are left alone. */
  reasoning: z.unknown().optional(),
  tool_calls: z.array(ToolCallSchema).nullish(),
  /** Legacy single call (pre-`tool_calls` API). */
  function_call: z.looseObject({ name: z.string(), arguments: z.string() }).nullish(),
});

const ToolMessageSchema = z.looseObject({
  role: z.literal("tool"),
  content: ContentSchema,
  tool_call_id: z.string(),
});

/** Legacy function result: linked to its call by the function name. */
const FunctionMessageSchema = z.looseObject({
  role: z.literal("function"),
  name: z.string(),
  content: ContentSchema,
});

export const MessageSchema = z.discriminatedUnion("role", [
  SystemMessageSchema,
  UserMessageSchema,
  AssistantMessageSchema,
  ToolMessageSchema,
  FunctionMessageSchema,
]);

const FunctionDefSchema = z.looseObject({
  name: z.string(),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
});

const CustomDefSchema = z.looseObject({
  name: z.string(),
  description: z.string().nullish(),
});

/**
 * A tool offered by the client. Types other than `function` and `custom` are accepted (and later
 * dropped) so new tool kinds do not break requests; a `function`/`custom` tool must carry its
 * definition object, otherwise it could not be offered to the model.
 */
export const ToolSchema = z
  .looseObject({
    type: z.string(),
    function: FunctionDefSchema.optional(),
    custom: CustomDefSchema.optional(),
  })
  .refine((tool) => tool.type !== "function" || tool.function !== undefined, {
    message: "a tool of type 'function' needs a 'function' object",
    path: ["function"],
  })
  .refine((tool) => tool.type !== "custom" || tool.custom !== undefined, {
    message: "a tool of type 'custom' needs a 'custom' object",
    path: ["custom"],
  });

const TokenCountSchema = z.number().int().positive().nullish();

export const ChatRequestSchema = z.looseObject({
  model: z.string(),
  messages: z.array(MessageSchema).min(1),
  tools: z.array(ToolSchema).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  max_completion_tokens: TokenCountSchema,
  max_tokens: TokenCountSchema,
  temperature: TemperatureSchema.nullish(),
  top_p: TopPSchema.nullish(),
  stop: z.union([z.string(), z.array(z.string())]).nullish(),
});

export type ChatRequest = z.infer<typeof ChatRequestSchema>;
export type ChatMessage = z.infer<typeof MessageSchema>;
export type ChatContent = z.infer<typeof ContentSchema>;
export type ChatTool = z.infer<typeof ToolSchema>;
