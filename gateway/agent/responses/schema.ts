/**
 * Zod schemas for an OpenAI Responses request (`POST /v1/responses`), as far as the gateway reads
 * it. Every object is loose: Codex sends fields we neither need nor want to reject
 * (`client_metadata`, `include`, `prompt_cache_key`, `store`, `reasoning`, item `id`/`status`, …),
 * and echoed history items gain or lose such fields between turns. Items, content parts and tools
 * are validated by their `type`; types we do not know are tolerated and come out as `ignored`, so a
 * newer client does not break the gateway.
 *
 * @module
 */
import { z } from "zod";
import { TemperatureSchema, TopPSchema } from "../../sampling_schema.ts";
import { InvalidRequestError } from "../../protocol.ts";
import { describeIssues, explainIssues } from "../../http/mod.ts";

/** What an item, part or tool of an unknown `type` parses to: kept out of the way, not rejected. */
export interface Ignored {
  type: "ignored";
  ignoredType: string;
}

/**
 * A schema that picks one of `schemas` by the value's `type` field (`defaultType` when absent:
 * Responses allows message items without `type`). Unknown types parse to {@link Ignored}.
 * Inner issues are re-reported with their paths so errors still name the exact field.
 */
function byType<S extends Record<string, z.ZodType>>(
  what: string,
  schemas: S,
  defaultType?: string,
) {
  return z.unknown().transform((value, ctx): z.output<S[keyof S]> | Ignored => {
    const isObject = typeof value === "object" && value !== null && !Array.isArray(value);
    const type = isObject ? (value as { type?: unknown }).type ?? defaultType : undefined;
    if (typeof type !== "string") {
      ctx.addIssue({ code: "custom", message: `expected ${what} object with a string "type"` });
      return z.NEVER;
    }
    const schema = Object.hasOwn(schemas, type) ? schemas[type] : undefined;
    if (!schema) return { type: "ignored", ignoredType: type };
    const result = schema.safeParse({ ...(value as object), type });
    if (result.success) return result.data as z.output<S[keyof S]>;
    for (const problem of explainIssues(result.error.issues)) {
      ctx.addIssue({ code: "custom", path: problem.path, message: problem.message });
    }
    return z.NEVER;
  });
}

const textPart = <T extends string>(type: T) =>
  z.looseObject({ type: z.literal(type), text: z.string() });

/** Content parts of messages and tool outputs; only what reaches the model is read. */
export const ContentPart = byType("a content part", {
  input_text: textPart("input_text"),
  output_text: textPart("output_text"),
  text: textPart("text"),
  refusal: z.looseObject({ type: z.literal("refusal"), refusal: z.string() }),
  input_image: z.looseObject({
    type: z.literal("input_image"),
    image_url: z.string().nullish(),
    file_id: z.string().nullish(),
  }),
  input_file: z.looseObject({ type: z.literal("input_file") }),
});
export type ContentPart = z.output<typeof ContentPart>;

/** `string | part[]`, as message content and tool outputs allow. */
const Content = z.union([z.string(), z.array(ContentPart)], {
  error: "expected a string or an array of content parts",
});

export const MessageItem = z.looseObject({
  type: z.literal("message"),
  role: z.enum(["user", "assistant", "system", "developer"]),
  content: Content,
});

export const ReasoningItem = z.looseObject({
  type: z.literal("reasoning"),
  summary: z.array(z.looseObject({ text: z.string() })).optional(),
  /** Codex echoes `content: null` on reasoning items it received without one. */
  content: z.array(z.looseObject({ type: z.string(), text: z.string() })).nullish(),
});

export const FunctionCallItem = z.looseObject({
  type: z.literal("function_call"),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
});

export const CustomToolCallItem = z.looseObject({
  type: z.literal("custom_tool_call"),
  call_id: z.string(),
  name: z.string(),
  input: z.string(),
});

const toolOutput = <T extends string>(type: T) =>
  z.looseObject({ type: z.literal(type), call_id: z.string(), output: Content });

export const InputItem = byType("an input item", {
  message: MessageItem,
  reasoning: ReasoningItem,
  function_call: FunctionCallItem,
  custom_tool_call: CustomToolCallItem,
  function_call_output: toolOutput("function_call_output"),
  custom_tool_call_output: toolOutput("custom_tool_call_output"),
}, "message");
export type InputItem = z.output<typeof InputItem>;

export const FunctionTool = z.looseObject({
  type: z.literal("function"),
  name: z.string(),
  description: z.string().nullish(),
  parameters: z.unknown().optional(),
});
export type FunctionTool = z.output<typeof FunctionTool>;

export const CustomTool = z.looseObject({
  type: z.literal("custom"),
  name: z.string(),
  description: z.string().nullish(),
  format: z.unknown().optional(),
});

/** Codex groups tools (e.g. `multi_agent_v1`) in a namespace; only nested functions matter. */
export const NamespaceTool = z.looseObject({
  type: z.literal("namespace"),
  name: z.string(),
  tools: z.array(byType("a tool", { function: FunctionTool })),
});

/** Hosted and client tools we cannot describe to the model (tool_search, web_search, …) are ignored. */
export const Tool = byType("a tool", {
  function: FunctionTool,
  custom: CustomTool,
  namespace: NamespaceTool,
});
export type Tool = z.output<typeof Tool>;

export const ResponsesRequest = z.looseObject({
  model: z.string(),
  instructions: z.string().nullish(),
  input: z.union([z.string(), z.array(InputItem)], {
    error: "expected a string or an array of input items",
  }),
  tools: z.array(Tool).nullish(),
  stream: z.boolean().nullish(),
  max_output_tokens: z.number().int().positive().nullish(),
  temperature: TemperatureSchema.nullish(),
  top_p: TopPSchema.nullish(),
});
export type ResponsesRequest = z.output<typeof ResponsesRequest>;

/** Validates a request body; throws {@link InvalidRequestError} naming every offending field. */
export function parseResponsesRequest(body: unknown): ResponsesRequest {
  const result = ResponsesRequest.safeParse(body);
  if (result.success) return result.data;
  throw new InvalidRequestError(
    `Invalid Responses request: ${describeIssues(result.error.issues)}`,
  );
}
