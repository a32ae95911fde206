/**
 * TEST DOUBLE for hosted APIs: a loopback server that answers Anthropic `/v1/messages` and OpenAI
 * `/v1/chat/completions` / `/v1/responses` by replaying the streams the real CLIs accepted in the
 * recorded captures (`gateway/agent/<protocol>/__fixtures__`), or the matching JSON body for
 * `stream:false`. It records the bodies it received.
 *
 * @module
 */
import { parseSseText } from "../../generation/mod.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

interface Capture {
  body: Record<string, unknown>;
  response: { events: string[] };
}

function captures(file: string): Capture[] {
  return Deno.readTextFileSync(ROOT + file).trim().split("\n").map((l) => JSON.parse(l));
}

export const FIXTURES = {
  anthropic: captures("gateway/agent/anthropic/__fixtures__/claude-code-2.1.330.jsonl"),
  chat: captures("gateway/agent/openai_chat/__fixtures__/pi-0.73.1.jsonl"),
  responses: captures("gateway/agent/responses/__fixtures__/codex-0.169.0.jsonl"),
};

/** The JSON payloads of a captured stream's events. */
function payloads(events: string[]): Record<string, unknown>[] {
  return parseSseText(events.map((e) => `${e}\n\n`).join("")).events.map((e) => e.data)
    .filter((d) => d !== "[DONE]").map((d) => JSON.parse(d));
}

/** The non-streaming body equivalent to a captured stream's final state. */
function finalBody(kind: keyof typeof FIXTURES, events: string[]): unknown {
  const data = payloads(events);
  if (kind === "responses") return (data.at(-1) as { response: unknown }).response;
  if (kind === "anthropic") {
    const start = data[0] as { message: Record<string, unknown> };
    const blocks = data.filter((d) => d.type === "content_block_stop").map((_, i) => {
      const b = {
        ...(data.find((d) => d.type === "content_block_start" && d.index === i) as {
          content_block: Record<string, unknown>;
        }).content_block,
      };
      for (const d of data.filter((d) => d.type === "content_block_delta" && d.index === i)) {
        const delta = d.delta as Record<string, string>;
        if (delta.type === "text_delta") b.text = (b.text ?? "") + delta.text;
        if (delta.type === "thinking_delta") b.thinking = (b.thinking ?? "") + delta.thinking;
        if (delta.type === "signature_delta") b.signature = delta.signature;
        if (delta.type === "input_json_delta") b.partial = (b.partial ?? "") + delta.partial_json;
      }
      if (b.type === "tool_use") {
        b.input = JSON.parse((b.partial as string) || "{}");
        delete b.partial;
      }
      return b;
    });
    const end = data.find((d) => d.type === "message_delta") as {
      delta: { stop_reason: string };
      usage: Record<string, number>;
    };
    return {
      ...start.message,
      content: blocks,
      stop_reason: end.delta.stop_reason,
      usage: { ...(start.message.usage as object), ...end.usage },
    };
  }
  throw new Error("chat JSON bodies are not replayed by this double");
}

export class FakeUpstreamTestDouble {
  readonly received: { path: string; body: Record<string, unknown>; headers: Headers }[] = [];
  readonly #server: Deno.HttpServer;
  readonly url: string;

  constructor() {
    this.#server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
      const path = new URL(req.url).pathname;
      const body = await req.json();
      this.received.push({ path, body, headers: new Headers(req.headers) });
      const kind = path.endsWith("/messages")
        ? "anthropic"
        : path.endsWith("/chat/completions")
        ? "chat"
        : "responses";
      const history = (b: Record<string, unknown>) => ((b.messages ?? b.input) as unknown[]).length;
      const capture = FIXTURES[kind][history(body) > history(FIXTURES[kind][0].body) ? 1 : 0];
      if (!body.stream) return Response.json(finalBody(kind, capture.response.events));
      return new Response(capture.response.events.map((e) => e + "\n\n").join(""), {
        headers: { "content-type": "text/event-stream" },
      });
    });
    this.url = `http://127.0.0.1:${(this.#server.addr as Deno.NetAddr).port}`;
  }

  close(): Promise<void> {
    return this.#server.shutdown();
  }
}
