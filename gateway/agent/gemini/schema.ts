/**
 * Zod schemas for Gemini `generateContent` request bodies (`POST
 * /v1beta/models/<model>:generateContent`, `:streamGenerateContent`, `:countTokens`).
 *
 * Loose objects throughout: clients send fields the gateway does not interpret (`safetySettings`,
 * `toolConfig`, `cachedContent`, `thinkingConfig`, `responseJsonSchema`, `videoMetadata`, new
 * part kinds…) and they must pass untouched. Only what the conversion reads is checked. A part is
 * one object with one data field (`text`, `functionCall`, `functionResponse`, `inlineData`, …);
 * parts of a kind this module does not read pass as they are and are ignored.
 *
 * @module
 */
import { z } from "zod";
import { TemperatureSchema, TopPSchema } from "../../sampling_schema.ts";

/**
 * A blob (`inlineData`: `data` in base64) or a file reference (`fileData`: `fileUri`); an image
 * blob is read, any other only by its MIME type.
 */
const Media = z.looseObject({
  mimeType: z.string().optional(),
  data: z.string().optional(),
  fileUri: z.string().optional(),
});

export const FunctionCall = z.looseObject({
  id: z.string().optional(),
  name: z.string(),
  args: z.record(z.string(), z.unknown()).optional(),
});

export const FunctionResponse = z.looseObject({
  id: z.string().optional(),
  name: z.string(),
  response: z.record(z.string(), z.unknown()).optional(),
  /** Multimodal function responses (an image a tool read). */
  parts: z.array(z.looseObject({ inlineData: Media.optional(), fileData: Media.optional() }))
    .optional(),
});

export const Part = z.looseObject({
  text: z.string().optional(),
  /** The part is the model's reasoning. */
  thought: z.boolean().optional(),
  /** Opaque, echoed by clients; the gateway's own carry the turn's reasoning. */
  thoughtSignature: z.string().optional(),
  functionCall: FunctionCall.optional(),
  functionResponse: FunctionResponse.optional(),
  inlineData: Media.optional(),
  fileData: Media.optional(),
});
export type Part = z.output<typeof Part>;

/** `role` is `user` or `model` (`function` in older clients' tool results); absent means user. */
export const Content = z.looseObject({
  role: z.enum(["user", "model", "function"]).optional(),
  parts: z.array(Part).optional(),
});
export type Content = z.output<typeof Content>;

export const FunctionDeclaration = z.looseObject({
  name: z.string(),
  description: z.string().optional(),
  /** OpenAPI-subset schema. */
  parameters: z.unknown().optional(),
  /** JSON Schema (what the Gemini CLI sends). */
  parametersJsonSchema: z.unknown().optional(),
});
export type FunctionDeclaration = z.output<typeof FunctionDeclaration>;

/** A tool: function declarations, or a server tool (`googleSearch`, `codeExecution`, …). */
export const Tool = z.looseObject({
  functionDeclarations: z.array(FunctionDeclaration).optional(),
});

export const GenerationConfig = z.looseObject({
  maxOutputTokens: z.number().int().positive().optional(),
  temperature: TemperatureSchema.optional(),
  topP: TopPSchema.optional(),
  stopSequences: z.array(z.string()).optional(),
  candidateCount: z.number().int().positive().optional(),
});

/** Body of `generateContent` / `streamGenerateContent`. */
export const GenerateContentRequest = z.looseObject({
  contents: z.array(Content),
  systemInstruction: z.union([z.string(), Content]).optional(),
  tools: z.array(Tool).optional(),
  generationConfig: GenerationConfig.optional(),
});
export type GenerateContentRequest = z.output<typeof GenerateContentRequest>;

/** Body of `countTokens`: bare `contents`, or a whole `generateContentRequest`. */
export const CountTokensRequest = z.looseObject({
  contents: z.array(Content).optional(),
  generateContentRequest: GenerateContentRequest.optional(),
});
