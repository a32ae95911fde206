/**
 * The HTTP surface: agent protocols (Anthropic Messages, OpenAI Chat, OpenAI Responses), the
 * trainer API, SSE, errors.
 *
 * @module
 */
export { createGateway, type Gateway, type GatewayOptions } from "./app.ts";
export { GatewayError } from "./gateway_error.ts";
export type { ProtocolAdapter, SseEvent } from "./protocol.ts";
