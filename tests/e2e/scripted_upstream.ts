/**
 * TEST DOUBLE of a hosted model API for black-box end-to-end runs: a loopback server answering
 * Anthropic `POST /v1/messages` and OpenAI `POST /v1/chat/completions` / `POST /v1/responses`
 * with a scripted two-turn conversation, in each protocol's real streaming shape.
 *
 * The request is read with the gateway's own protocol modules (`parseRequest`), the reply is
 * decided from it (a shell tool call while the history holds no tool result, a final answer once
 * it does), and the answer is written with the same modules' `toStreamEvents` (SSE) or
 * `toResponseBody` (JSON for `stream:false`): the sequences the real CLIs accept from rollgate.
 * The shell tool is the one the request offers among `shellTools`, so one double serves every CLI.
 *
 * @module
 */
import {
  anthropicAdapter,
  openaiChatAdapter,
  type ProtocolAdapter,
  responsesAdapter,
  type SseEvent,
} from "../../gateway/mod.ts";
import type { ShellTool } from "../../harness/mod.ts";
import type { AssistantMessage, CanonicalRequest, TurnAnswer } from "../../canonical/mod.ts";

export interface UpstreamReceived {
  path: string;
  body: Record<string, unknown>;
  request: CanonicalRequest;
  /** What the double answered. */
  answer: AssistantMessage;
}

/** What the double says: a call of the offered shell tool, then (after its result) a text. */
export interface UpstreamScript {
  shellTools: ShellTool[];
  command: string;
  finalText: string;
}

function adapterFor(path: string): ProtocolAdapter | undefined {
  if (path.endsWith("/v1/messages")) return anthropicAdapter;
  if (path.endsWith("/v1/chat/completions")) return openaiChatAdapter;
  if (path.endsWith("/v1/responses")) return responsesAdapter;
  return undefined;
}

function sse(events: SseEvent[]): string {
  return events.map((e) => (e.event ? `event: ${e.event}\n` : "") + `data: ${e.data}\n\n`).join(
    "",
  );
}

export class ScriptedUpstreamTestDouble {
  readonly received: UpstreamReceived[] = [];
  readonly url: string;
  readonly #server: Deno.HttpServer<Deno.NetAddr>;
  #calls = 0;

  constructor(readonly script: UpstreamScript) {
    this.#server = Deno.serve(
      { port: 0, hostname: "127.0.0.1", onListen() {} },
      (req) => this.#handle(req),
    );
    this.url = `http://127.0.0.1:${this.#server.addr.port}`;
  }

  /** The assistant message for a request: depends only on the request's history and tools. */
  reply(request: CanonicalRequest): { message: AssistantMessage; toolCall: boolean } {
    if (request.messages.some((m) => m.role === "tool")) {
      return {
        message: {
          role: "assistant",
          content: this.script.finalText,
          reasoning_content: "The command ran; the file exists now.",
        },
        toolCall: false,
      };
    }
    const offered = new Set(request.tools.map((t) => t.name));
    const shell = this.script.shellTools.find((s) => offered.has(s.name));
    if (!shell) {
      return {
        message: { role: "assistant", content: "No shell tool was offered." },
        toolCall: false,
      };
    }
    return {
      message: {
        role: "assistant",
        content: "",
        reasoning_content: "I will create the file with the shell.",
        tool_calls: [{
          id: `${this.#calls}_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`,
          name: shell.name,
          arguments: JSON.stringify({ [shell.argument]: this.script.command }),
        }],
      },
      toolCall: true,
    };
  }

  async #handle(req: Request): Promise<Response> {
    const path = new URL(req.url).pathname;
    const adapter = adapterFor(path);
    if (req.method !== "POST" || !adapter) {
      return Response.json({ error: { message: `no route ${req.method} ${path}` } }, {
        status: 404,
      });
    }
    const body = await req.json();
    let request: CanonicalRequest;
    try {
      request = adapter.parseRequest(body);
    } catch (e) {
      return Response.json(adapter.errorBody(400, (e as Error).message), { status: 400 });
    }
    const n = ++this.#calls;
    const { message, toolCall } = this.reply(request);
    for (const call of message.tool_calls ?? []) call.id = adapter.toolCallIdPrefix + call.id;
    this.received.push({ path, body, request, answer: message });
    const answer: TurnAnswer = {
      id: `upstream_${n}`,
      model: request.model,
      message,
      stopReason: toolCall ? "tool_calls" : "stop",
      usage: { input_tokens: 100 * n, output_tokens: 20, reasoning_tokens: 8, cached_tokens: 0 },
      created: Math.floor(Date.now() / 1000),
    };
    if (!request.stream) return Response.json(adapter.toResponseBody(answer, request));
    return new Response(sse(adapter.toStreamEvents(answer, request)), {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    });
  }

  close(): Promise<void> {
    return this.#server.shutdown();
  }
}
