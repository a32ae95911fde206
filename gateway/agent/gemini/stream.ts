/**
 * Turn answer → the server-sent events of `streamGenerateContent?alt=sse`: `data:` lines only,
 * each a whole `GenerateContentResponse` holding one part, as the API streams (and as the Gemini
 * CLI 0.61.0 was recorded accepting, `__fixtures__/`): thought pieces, text pieces, one chunk per
 * function call; the last chunk carries `finishReason` and the complete usage, the others the
 * prompt's. When nothing is left to send at the end (a text answer streamed as generated), the
 * last chunk holds an empty text part, as the API's does.
 *
 * The Google SDKs' stream parser reads `data:` lines from the very first byte and stops at
 * anything else, so this protocol sends no SSE comments: {@link KEEP_ALIVE} is an empty response
 * chunk, and an error once the stream has started is a bare JSON error object, which is what the
 * JS SDK looks for in a chunk (`{"error": {code, message, status}}`) to throw the API error.
 *
 * @module
 */
import {
  type AnswerHeader,
  answerHeader,
  type AnswerOptions,
  type TurnAnswer,
} from "../../../canonical/mod.ts";
import type { AnswerStreamEncoder, SseEvent } from "../../protocol.ts";
import { splitDeltas, unsentText } from "../text_deltas.ts";
import { wholeAnswerEvents } from "../whole_answer.ts";
import { errorBody } from "./errors.ts";
import {
  functionCallPart,
  type GenerateContentResponse,
  mapFinishReason,
  promptUsage,
  type ResponsePart,
  usageMetadata,
} from "./response.ts";
import { thoughtSignature } from "./thought_signature.ts";

/** What keeps a silent stream open: a chunk with nothing in it (clients skip it). */
export const KEEP_ALIVE: SseEvent = { data: "{}" };

/** The complete event sequence for an answer, the `finishReason` chunk last. */
export function toStreamEvents(answer: TurnAnswer, request?: AnswerOptions): SseEvent[] {
  return wholeAnswerEvents(streamEncoder(answerHeader(answer), request), answer);
}

/**
 * An encoder for an answer streamed as it is generated. The signature goes on the first text
 * piece (with the reasoning streamed so far, all of it: reasoning never follows text), or, for an
 * answer without text, on its first function call. Reasoning that arrives once text has started
 * is dropped, and so is the rest of a part whose streamed text `finish` finds is not a prefix of
 * the answer's (the client cannot take back what it has). After `finish`, every call emits
 * nothing. `request` is unused.
 */
export function streamEncoder(
  header: AnswerHeader,
  _request?: AnswerOptions,
): AnswerStreamEncoder {
  let sentReasoning = "";
  let sentText: string | undefined;
  let signed = false;
  let finished = false;

  const chunk = (part: ResponsePart): GenerateContentResponse => ({
    candidates: [{ content: { parts: [part], role: "model" }, index: 0 }],
    usageMetadata: promptUsage(header.inputTokens),
    modelVersion: header.model,
    responseId: header.id,
  });
  const signedPart = (part: ResponsePart, reasoning: string): ResponsePart => {
    if (signed || reasoning === "") return part;
    signed = true;
    return { ...part, thoughtSignature: thoughtSignature(header.id, reasoning) };
  };
  const reasoningChunks = (delta: string) => {
    sentReasoning += delta;
    return splitDeltas(delta).map((text) => chunk({ text, thought: true }));
  };
  const textChunks = (delta: string, reasoning: string) => {
    sentText = (sentText ?? "") + delta;
    return splitDeltas(delta).map((text) => chunk(signedPart({ text }, reasoning)));
  };
  const events = (chunks: GenerateContentResponse[]) =>
    chunks.map((c): SseEvent => ({ data: JSON.stringify(c) }));

  return {
    start: () => [],

    reasoning(delta) {
      if (finished || delta === "" || sentText !== undefined) return [];
      return events(reasoningChunks(delta));
    },

    text(delta) {
      if (finished || delta === "") return [];
      return events(textChunks(delta, sentReasoning));
    },

    finish(answer) {
      if (finished) return [];
      finished = true;
      const { message } = answer;
      const reasoning = message.reasoning_content ?? "";
      const thoughts = sentText === undefined
        ? reasoningChunks(unsentText(reasoning, sentReasoning))
        : [];
      const rest = textChunks(unsentText(message.content, sentText ?? ""), reasoning);
      for (const call of message.tool_calls ?? []) {
        rest.push(chunk(signedPart(functionCallPart(call), reasoning)));
      }
      if (rest.length === 0) rest.push(chunk(signedPart({ text: "" }, reasoning)));
      const last = rest.at(-1)!;
      last.candidates[0].finishReason = mapFinishReason(answer.stopReason);
      last.usageMetadata = usageMetadata(answer.usage);
      return events([...thoughts, ...rest]);
    },
  };
}

/**
 * An error after the 200 went out: the bare error object (no `data:` framing), which the JS SDK
 * detects in a chunk and throws as the API error with its code.
 */
export function streamErrorEvents(status: number, message: string): SseEvent[] {
  return [{ data: JSON.stringify(errorBody(status, message)), bare: true }];
}
