/**
 * Turn answer → `GenerateContentResponse`, whole (`generateContent`) or as the chunks of a stream
 * (`stream.ts` builds its chunks with the same pieces, so the two forms cannot disagree).
 *
 * Parts come in the API's order: the reasoning as a thought part, the text, then one
 * `functionCall` per tool call, with the gateway's ids. The first part after the thought part
 * carries the `thoughtSignature` with the reasoning (`thought_signature.ts`): clients keep that
 * part's signature when they send the turn back (the Gemini CLI merges streamed text parts into
 * the first one and keeps only its fields).
 *
 * Usage is in the policy's tokens, as Gemini splits it: `promptTokenCount` (the whole prompt;
 * `cachedContentTokenCount` is the part reused verbatim, a subset), `candidatesTokenCount` (the
 * output without reasoning), `thoughtsTokenCount` (the reasoning), `totalTokenCount` (prompt plus
 * all output). Zero counts other than the first three are left out, as the API does.
 *
 * @module
 */
import type {
  AnswerOptions,
  AssistantMessage,
  StopReason,
  TurnAnswer,
  Usage,
} from "../../../canonical/mod.ts";
import { argumentsObject } from "../tool_arguments.ts";
import { thoughtSignature } from "./thought_signature.ts";

/** A part of the gateway's answers. */
export interface ResponsePart {
  text?: string;
  thought?: true;
  thoughtSignature?: string;
  functionCall?: { id: string; name: string; args: Record<string, unknown> };
}

export interface UsageMetadata {
  promptTokenCount: number;
  candidatesTokenCount?: number;
  totalTokenCount: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
}

export interface Candidate {
  content: { parts: ResponsePart[]; role: "model" };
  finishReason?: "STOP" | "MAX_TOKENS";
  index: 0;
}

export interface GenerateContentResponse {
  candidates: [Candidate];
  usageMetadata: UsageMetadata;
  modelVersion: string;
  responseId: string;
}

/** A function call stops with `STOP` in Gemini, like a text answer. */
export function mapFinishReason(reason: StopReason): "STOP" | "MAX_TOKENS" {
  return reason === "length" ? "MAX_TOKENS" : "STOP";
}

/** The complete usage of an answer. */
export function usageMetadata(usage: Usage): UsageMetadata {
  const out: UsageMetadata = {
    promptTokenCount: usage.input_tokens,
    candidatesTokenCount: usage.output_tokens - usage.reasoning_tokens,
    totalTokenCount: usage.input_tokens + usage.output_tokens,
  };
  if (usage.reasoning_tokens > 0) out.thoughtsTokenCount = usage.reasoning_tokens;
  if (usage.cached_tokens > 0) out.cachedContentTokenCount = usage.cached_tokens;
  return out;
}

/** Usage while the answer is still coming: the prompt only. */
export function promptUsage(inputTokens: number): UsageMetadata {
  return { promptTokenCount: inputTokens, totalTokenCount: inputTokens };
}

/** A tool call's part. */
export function functionCallPart(call: NonNullable<AssistantMessage["tool_calls"]>[number]) {
  return { functionCall: { id: call.id, name: call.name, args: argumentsObject(call.arguments) } };
}

/** The answer's parts, signature on the first part after the thought part. */
export function responseParts(answer: TurnAnswer): ResponsePart[] {
  const { message } = answer;
  const reasoning = message.reasoning_content ?? "";
  const parts: ResponsePart[] = [];
  if (message.content !== "") parts.push({ text: message.content });
  parts.push(...(message.tool_calls ?? []).map(functionCallPart));
  if (parts.length === 0) parts.push({ text: "" });
  if (reasoning === "") return parts;
  parts[0] = { ...parts[0], thoughtSignature: thoughtSignature(answer.id, reasoning) };
  return [{ text: reasoning, thought: true }, ...parts];
}

/** The non-streaming response body. `request` is unused: everything comes from the answer. */
export function toGenerateContentResponse(
  answer: TurnAnswer,
  _request?: AnswerOptions,
): GenerateContentResponse {
  return {
    candidates: [{
      content: { parts: responseParts(answer), role: "model" },
      finishReason: mapFinishReason(answer.stopReason),
      index: 0,
    }],
    usageMetadata: usageMetadata(answer.usage),
    modelVersion: answer.model,
    responseId: answer.id,
  };
}
