/**
 * The turn contract shared by the gateway and the trajectory: canonical messages and tools, the
 * canonical request every wire protocol converts into, and the protocol-neutral answer. Pure
 * types and tiny pure functions; no I/O, no imports from any other folder.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { answerHeader, type CanonicalRequest, type TurnAnswer } from "./mod.ts";
 *
 * const request: CanonicalRequest = {
 *   protocol: "chat",
 *   model: "m",
 *   messages: [{ role: "user", content: "hi" }],
 *   tools: [],
 *   sampling: {},
 *   stream: false,
 * };
 * const answer: TurnAnswer = {
 *   id: "t_0",
 *   model: request.model,
 *   message: { role: "assistant", content: "hello" },
 *   stopReason: "stop",
 *   usage: { input_tokens: 9, output_tokens: 2, reasoning_tokens: 0, cached_tokens: 0 },
 *   created: 0,
 * };
 * assert.equal(answerHeader(answer).inputTokens, 9);
 * ```
 *
 * @module
 */
export type {
  AssistantMessage,
  ContentImage,
  ImageRef,
  Message,
  SystemMessage,
  ToolCall,
  ToolMessage,
  ToolSpec,
  UserMessage,
} from "./messages.ts";
export { readImageHeader } from "./image_header.ts";
export type {
  AnswerOptions,
  CanonicalRequest,
  Protocol,
  RequestImage,
  SamplingParams,
} from "./request.ts";
export {
  type AnswerHeader,
  answerHeader,
  type StopReason,
  type TurnAnswer,
  type Usage,
} from "./answer.ts";
