/**
 * Gemini `generateContent` call → canonical request.
 *
 * One `user` content becomes its tool results (`functionResponse` parts, first: they answer the
 * preceding model turn) and then one user message of its text parts joined by newlines (the
 * Gemini CLI sends the session context and the prompt as two parts): an image blob
 * (`inlineData`, `image/*`) is an image part, an image by reference (`fileData`) is refused (never
 * fetched), other media become `[file]`. One `model` content becomes one assistant message: thought parts are its
 * reasoning, text parts its content, both concatenated as the streamed pieces of one answer are,
 * and `functionCall` parts its tool calls (`args` as JSON text, compared as parsed JSON). A client
 * that dropped the thought parts (the Gemini CLI does) still sends the gateway's
 * `thoughtSignature`, which carries the reasoning (`thought_signature.ts`). Server tools
 * (`googleSearch`, `codeExecution`, …) run at Google and are dropped.
 *
 * @module
 */
import type { z } from "zod";
import type {
  AssistantMessage,
  CanonicalRequest,
  Message,
  SamplingParams,
  ToolSpec,
} from "../../../canonical/mod.ts";
import { type HistoryRead, InvalidRequestError } from "../../protocol.ts";
import { describeIssues } from "../../http/mod.ts";
import { type ContentPart, remoteImage, RequestImages } from "../image_input.ts";
import type { GeminiCall } from "./gemini_call.ts";
import {
  type Content,
  CountTokensRequest,
  GenerateContentRequest,
  type Part,
  type Tool,
} from "./schema.ts";
import { reasoningOf } from "./thought_signature.ts";

/** {@link toCanonicalRequest}, and where each content's messages end. */
export function readGeminiHistory(call: GeminiCall): HistoryRead {
  const ends: number[] = [];
  const request = toCanonicalRequest(call, ends);
  return { request, lead: request.messages.length - (ends.at(-1) ?? 0), ends };
}

/** Validates and converts a `generateContent` / `streamGenerateContent` call. */
export function toCanonicalRequest(call: GeminiCall, ends?: number[]): CanonicalRequest {
  const req = parse(GenerateContentRequest, call.body);
  const candidates = req.generationConfig?.candidateCount ?? 1;
  if (candidates !== 1) {
    throw new InvalidRequestError(
      `generationConfig.candidateCount: the gateway answers one candidate, not ${candidates}`,
    );
  }
  return convert(call, req, ends);
}

/** Validates and converts a `countTokens` call (bare `contents` or a `generateContentRequest`). */
export function toCanonicalCountTokensRequest(call: GeminiCall): CanonicalRequest {
  const req = parse(CountTokensRequest, call.body);
  const inner = req.generateContentRequest ?? { contents: req.contents ?? [] };
  return { ...convert(call, inner), stream: false };
}

function parse<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new InvalidRequestError("request body must be a JSON object");
  }
  const result = schema.safeParse(body);
  if (!result.success) throw new InvalidRequestError(describeIssues(result.error.issues));
  return result.data;
}

/** Converts; `ends` (when given) gets the messages made up to each content, system not counted. */
function convert(
  call: GeminiCall,
  req: GenerateContentRequest,
  ends?: number[],
): CanonicalRequest {
  const messages: Message[] = [];
  const images = new RequestImages();
  const system = systemText(req.systemInstruction);
  if (system !== "") messages.push({ role: "system", content: system });
  const lead = messages.length;
  req.contents.forEach((content, i) => {
    if (content.role === "model") messages.push(assistantMessage(content.parts ?? []));
    else messages.push(...userMessages(content.parts ?? [], images, `contents[${i}].parts`));
    ends?.push(messages.length - lead);
  });
  return {
    protocol: "gemini",
    model: call.model,
    messages,
    tools: (req.tools ?? []).flatMap(convertTool),
    sampling: sampling(req.generationConfig),
    stream: call.method === "streamGenerateContent",
    ...(images.byHash.size ? { images: images.byHash } : {}),
  };
}

function systemText(system: string | Content | undefined): string {
  if (system === undefined) return "";
  if (typeof system === "string") return system;
  return (system.parts ?? []).flatMap((p) => p.text === undefined ? [] : [p.text]).join("\n");
}

/** What a media part shows the model: an image blob, or a placeholder for other media. */
function media(
  part: Pick<Part, "inlineData" | "fileData">,
  images: RequestImages,
  where: string,
): ContentPart | undefined {
  const { inlineData, fileData } = part;
  if (inlineData?.mimeType?.startsWith("image/")) {
    if (inlineData.data === undefined) {
      throw new InvalidRequestError(`${where}.inlineData.data: an image blob needs its data`);
    }
    return images.fromBase64(inlineData.data, `${where}.inlineData.data`);
  }
  if (fileData?.mimeType?.startsWith("image/")) {
    throw remoteImage(`${where}.fileData`, fileData.fileUri ?? "a file reference");
  }
  return inlineData || fileData ? "[file]" : undefined;
}

function userMessages(parts: Part[], images: RequestImages, where: string): Message[] {
  const tools: Message[] = [];
  const shown: ContentPart[] = [];
  parts.forEach((part, j) => {
    const fr = part.functionResponse;
    if (fr) {
      tools.push({
        role: "tool",
        tool_call_id: fr.id ?? "",
        name: fr.name,
        ...functionResponse(fr, images, `${where}[${j}].functionResponse`),
      });
    } else if (part.text !== undefined && !part.thought) {
      shown.push(part.text);
    } else {
      const m = media(part, images, `${where}[${j}]`);
      if (m) shown.push(m);
    }
  });
  // A content of only tool results has no user text; any other content keeps its user turn.
  if (shown.length === 0 && tools.length > 0) return tools;
  return [...tools, { role: "user", ...images.content(shown) }];
}

/**
 * A tool's result: the string of a `{output: string}` response (what the Gemini CLI's shell tool
 * sends), else the response as JSON; then its media parts.
 */
function functionResponse(
  fr: { response?: Record<string, unknown>; parts?: Pick<Part, "inlineData" | "fileData">[] },
  images: RequestImages,
  where: string,
) {
  const { response } = fr;
  const keys = response ? Object.keys(response) : [];
  const text = response === undefined || keys.length === 0
    ? ""
    : keys.length === 1 && typeof response.output === "string"
    ? response.output
    : JSON.stringify(response);
  const shown = (fr.parts ?? []).flatMap((p, k) => media(p, images, `${where}.parts[${k}]`) ?? []);
  return images.content(text === "" ? shown : [text, ...shown]);
}

function assistantMessage(parts: Part[]): AssistantMessage {
  let reasoning = "";
  let signed: string | undefined;
  let content = "";
  const calls: NonNullable<AssistantMessage["tool_calls"]> = [];
  for (const part of parts) {
    if (part.thoughtSignature !== undefined) signed ??= reasoningOf(part.thoughtSignature);
    if (part.functionCall) {
      const { id, name, args } = part.functionCall;
      calls.push({ id: id ?? "", name, arguments: JSON.stringify(args ?? {}) });
    } else if (part.text !== undefined) {
      if (part.thought) reasoning += part.text;
      else content += part.text;
    }
  }
  const message: AssistantMessage = { role: "assistant", content };
  // Thought parts when the client kept them, else the reasoning the gateway's signature carries.
  const said = reasoning !== "" ? reasoning : signed ?? "";
  if (said !== "") message.reasoning_content = said;
  if (calls.length > 0) message.tool_calls = calls;
  return message;
}

/** Function declarations only: server tools have no schema a template could render. */
function convertTool(tool: z.output<typeof Tool>): ToolSpec[] {
  return (tool.functionDeclarations ?? []).map((decl) => {
    const spec: ToolSpec = { name: decl.name, kind: "function", raw: decl };
    if (decl.description !== undefined) spec.description = decl.description;
    const parameters = decl.parametersJsonSchema ?? decl.parameters;
    if (parameters !== undefined) spec.parameters = parameters;
    return spec;
  });
}

/** Only the parameters the client set, so absent and unset compare equal. */
function sampling(config: GenerateContentRequest["generationConfig"]): SamplingParams {
  const out: SamplingParams = {};
  if (config?.maxOutputTokens !== undefined) out.max_tokens = config.maxOutputTokens;
  if (config?.temperature !== undefined) out.temperature = config.temperature;
  if (config?.topP !== undefined) out.top_p = config.topP;
  if (config?.stopSequences !== undefined) out.stop = config.stopSequences;
  return out;
}
