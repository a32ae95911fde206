/**
 * Black-box backends: the agent's request is forwarded unchanged to a hosted API with the official
 * SDKs (`@anthropic-ai/sdk`, `openai`), its events are relayed as they arrive, and the final
 * response is kept for the message-level record. No token ids are claimed: the hosted model's
 * tokenizer is not the policy's.
 *
 * @module
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { Protocol } from "../../../canonical/mod.ts";
import type { SseEvent } from "../../protocol.ts";
import { sameOriginFetch } from "./same_origin_fetch.ts";

export interface UpstreamCall {
  /** Streaming: the events to relay, in order (ends after the terminal event). */
  events?: AsyncIterable<SseEvent>;
  /** Non-streaming: the response body. */
  body?: unknown;
  /** The complete response object once the call is over (for the record). */
  final: Promise<unknown>;
}

export interface Upstream {
  readonly name: string;
  readonly protocols: readonly Protocol[];
  call(
    protocol: Protocol,
    body: Record<string, unknown>,
    headers: Headers,
    signal: AbortSignal,
  ): Promise<UpstreamCall>;
}

export interface UpstreamConfig {
  baseURL?: string;
  apiKey?: string;
  /** Replaces the agent's `model` (the agent may name the policy). */
  model?: string;
  timeoutMs?: number;
}

async function* relay<T extends { type?: string }>(
  source: AsyncIterable<T>,
  named: boolean,
  done?: string,
): AsyncIterable<SseEvent> {
  for await (const ev of source) {
    yield named ? { event: ev.type, data: JSON.stringify(ev) } : { data: JSON.stringify(ev) };
  }
  if (done) yield { data: done };
}

export class AnthropicUpstream implements Upstream {
  readonly name = "anthropic";
  readonly protocols = ["anthropic"] as const;
  readonly #client: Anthropic;
  constructor(readonly config: UpstreamConfig = {}) {
    this.#client = new Anthropic({
      baseURL: config.baseURL,
      // An empty variable counts as unset (`checkUpstream` says so at start).
      apiKey: config.apiKey || Deno.env.get("ANTHROPIC_API_KEY") || "missing",
      // Never pick up ANTHROPIC_AUTH_TOKEN from the environment: the key is explicit.
      authToken: null,
      timeout: config.timeoutMs,
      maxRetries: 0,
      fetch: sameOriginFetch,
    });
  }

  async call(_p: Protocol, body: Record<string, unknown>, headers: Headers, signal: AbortSignal) {
    const params = { ...body, ...(this.config.model ? { model: this.config.model } : {}) };
    const beta = headers.get("anthropic-beta");
    // An explicit timeout: without one the SDK refuses large non-streaming requests.
    const options = {
      signal,
      timeout: this.config.timeoutMs ?? 600_000,
      headers: beta ? { "anthropic-beta": beta } : {},
    };
    // deno-lint-ignore no-explicit-any
    const client = this.#client.messages as any;
    if (!body.stream) {
      const message = await client.create({ ...params, stream: false }, options);
      return { body: message, final: Promise.resolve(message) };
    }
    const stream = client.stream(params, options);
    return { events: relay(stream, true), final: stream.finalMessage() };
  }
}

export class OpenAIUpstream implements Upstream {
  readonly name = "openai";
  readonly protocols = ["chat", "responses"] as const;
  readonly #client: OpenAI;
  constructor(readonly config: UpstreamConfig = {}) {
    this.#client = new OpenAI({
      baseURL: config.baseURL,
      // An empty variable counts as unset (`checkUpstream` says so at start).
      apiKey: config.apiKey || Deno.env.get("OPENAI_API_KEY") || "missing",
      timeout: config.timeoutMs,
      maxRetries: 0,
      fetch: sameOriginFetch,
    });
  }

  async call(protocol: Protocol, body: Record<string, unknown>, _h: Headers, signal: AbortSignal) {
    const params = { ...body, ...(this.config.model ? { model: this.config.model } : {}) };
    const api =
      // deno-lint-ignore no-explicit-any
      (protocol === "chat" ? this.#client.chat.completions : this.#client.responses) as any;
    if (!body.stream) {
      const response = await api.create({ ...params, stream: false }, { signal });
      return { body: response, final: Promise.resolve(response) };
    }
    const stream = api.stream(params, { signal });
    return protocol === "chat"
      ? { events: relay(stream, false, "[DONE]"), final: stream.finalChatCompletion() }
      : { events: relay(stream, true), final: stream.finalResponse() };
  }
}

/** The black-box backends the command line asks for, by name (`anthropic`, `openai`). */
export function upstreamsFromFlags(flags: {
  anthropicUrl?: string;
  openaiUrl?: string;
  model?: string;
  timeoutMs?: number;
}): Record<string, Upstream> {
  const out: Record<string, Upstream> = {};
  const common = { model: flags.model, timeoutMs: flags.timeoutMs };
  if (flags.anthropicUrl) {
    out.anthropic = new AnthropicUpstream({ baseURL: flags.anthropicUrl, ...common });
  }
  if (flags.openaiUrl) out.openai = new OpenAIUpstream({ baseURL: flags.openaiUrl, ...common });
  return out;
}
