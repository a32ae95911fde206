/**
 * TEST DOUBLE at the model boundary, for recording what a real agent CLI sends: a loopback HTTP
 * server that speaks OpenAI Chat Completions, Anthropic Messages and Gemini `generateContent` well
 * enough for a CLI to run a scripted two-step task, and writes every request (headers, body, what it answered, every SSE
 * event as sent) as one JSON line in the format of `README.md` in this folder.
 *
 * The script: while the history holds no result of an action yet, reason, say a short text and
 * act (call the shell tool the request offers; a tool-less request gets a text action in
 * mini-swe-agent's fenced format); once a result is in, answer with the final text (tool-less:
 * the submit action). A tool-less request whose system prompt asks for a title gets a title.
 * Faults can be injected per request number (HTTP 500 bodies, a JSON body to `stream:true`) to
 * record retries and error handling.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { pythonJson } from "../../model/mod.ts";

/** One recorded request, as in `README.md` in this folder. */
export interface RecordedRequest {
  seq: number;
  ts: string;
  method: string;
  url: string;
  prefix: string;
  path: string;
  query: Record<string, string>;
  http: string;
  headers: Record<string, string>;
  body_bytes: number;
  body_bytes_decoded: number;
  // deno-lint-ignore no-explicit-any
  body: any;
  reply: Record<string, unknown>;
  response: { status: number; type: "sse" | "json"; events?: string[]; json?: unknown };
  ms: number;
}

/** A fault for one request number (1-based, counting every POST). */
export type Fault = { status: number } | "json-to-stream";

export interface FakeLlmOptions {
  /** File the JSON lines go to (appended). */
  out: string;
  /** Faults by request number. */
  faults?: Record<number, Fault>;
}

export const ACTION_COMMAND = "echo probe-ok > probe.txt && ls -a";
export const FINAL_TEXT = "Done: created probe.txt and listed the directory.";
export const SUBMIT_COMMAND = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT";

const SECRET_HEADERS = new Set([
  "authorization",
  "x-api-key",
  "x-goog-api-key",
  "api-key",
  "proxy-authorization",
]);

// deno-lint-ignore no-explicit-any
type Json = any;

function redact(name: string, value: string): string {
  if (!SECRET_HEADERS.has(name)) return value;
  return `<redacted len=${value.length} prefix=${JSON.stringify(value.slice(0, 12))}>`;
}

function hex(n: number): string {
  return randomBytes(n).toString("hex");
}

/** Splits a text in pieces of at most `n` characters (at least one piece). */
function pieces(text: string, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += n) out.push(text.slice(i, i + n));
  return out.length ? out : [""];
}

/** The shell tool a request offers (name and its command argument), if any. */
function shellTool(tools: Json[]): { name: string; argument: string; required: string[] } | null {
  for (const t of tools ?? []) {
    const fn = t.function ?? t;
    const name: string = fn.name ?? "";
    if (!/^(bash|shell|run_shell_command|exec_command)$/i.test(name)) continue;
    const schema = fn.parameters ?? fn.parametersJsonSchema ?? fn.input_schema ?? {};
    const props = Object.keys(schema.properties ?? {});
    const argument = props.includes("command") ? "command" : props.includes("cmd") ? "cmd" : "";
    if (argument) return { name, argument, required: schema.required ?? [] };
  }
  return null;
}

/** Flattens any message content (or Gemini `Content`) to text. */
function textOf(content: Json): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content?.parts)) return textOf(content.parts);
  if (!Array.isArray(content)) return "";
  return content.map((p) => (typeof p?.text === "string" ? p.text : "")).join("");
}

interface Plan {
  plan: "tool" | "text" | "title";
  reasoning: string;
  content: string;
  tool?: { name: string; args: Record<string, unknown> };
}

/** Decides the reply from the history, the offered tools and the system prompt. */
function decide(system: string, messages: Json[], tools: Json[]): Plan {
  const shell = shellTool(tools);
  const acted = messages.some((m) =>
    m.role === "tool" ||
    (m.parts ?? []).some((p: Json) => p?.functionResponse) ||
    (Array.isArray(m.content) && m.content.some((b: Json) => b?.type === "tool_result")) ||
    (m.role === "user" && /<returncode>/.test(textOf(m.content)))
  );
  if (
    !shell && (tools ?? []).length === 0 && /title/i.test(system + textOf(messages[0]?.content))
  ) {
    return { plan: "title", reasoning: "", content: "Create probe file" };
  }
  if (shell) {
    if (acted) return { plan: "text", reasoning: "I should answer now.", content: FINAL_TEXT };
    const args: Record<string, unknown> = { [shell.argument]: ACTION_COMMAND };
    for (const r of shell.required) if (!(r in args)) args[r] = "Create probe.txt and list files";
    return {
      plan: "tool",
      reasoning: "I should run a command.",
      content: "I will run a command.",
      tool: { name: shell.name, args },
    };
  }
  // No tools at all: a text action in mini-swe-agent's fenced format.
  const command = acted ? SUBMIT_COMMAND : ACTION_COMMAND;
  const thought = acted
    ? "THOUGHT: The file exists and the listing shows it. I will submit."
    : "THOUGHT: I will create the file and list the directory.";
  return {
    plan: "text",
    reasoning: acted ? "I should submit now." : "I should run a command.",
    content: `${thought}\n\n\`\`\`mswea_bash_command\n${command}\n\`\`\``,
  };
}

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions

function chatReply(body: Json, plan: Plan, model: string) {
  const id = `chatcmpl-${hex(12)}`;
  const created = Math.floor(Date.now() / 1000);
  const toolCalls = plan.tool
    ? [{
      id: `call_${hex(12)}`,
      type: "function",
      // Python's json.dumps spacing, as a Qwen3-family policy writes (and the gateway relays) it.
      function: { name: plan.tool.name, arguments: pythonJson(plan.tool.args) },
    }]
    : undefined;
  const finish = toolCalls ? "tool_calls" : "stop";
  const usage = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };
  const reply = {
    plan: plan.plan,
    ...(plan.tool ? { tool: plan.tool.name, args: plan.tool.args } : {}),
    content: plan.content,
    reasoning_content: plan.reasoning,
    ...(toolCalls ? { tool_calls: toolCalls } : {}),
  };
  const json = {
    id,
    object: "chat.completion",
    created,
    model,
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: plan.content,
        ...(plan.reasoning ? { reasoning_content: plan.reasoning } : {}),
        ...(toolCalls ? { tool_calls: toolCalls } : {}),
      },
      finish_reason: finish,
    }],
    usage,
  };
  const chunk = (delta: Json, finish_reason: string | null = null) =>
    `data: ${
      JSON.stringify({
        id,
        object: "chat.completion.chunk",
        created,
        model,
        choices: [{ index: 0, delta, finish_reason }],
      })
    }`;
  const events = [chunk({ role: "assistant", content: "" })];
  if (plan.reasoning) {
    for (const p of pieces(plan.reasoning, 12)) events.push(chunk({ reasoning_content: p }));
  }
  if (plan.content) {
    for (const p of pieces(plan.content, 24)) {
      events.push(chunk({ content: p }));
    }
  }
  if (toolCalls) {
    const c = toolCalls[0];
    events.push(chunk({
      tool_calls: [{
        index: 0,
        id: c.id,
        type: "function",
        function: { name: c.function.name, arguments: "" },
      }],
    }));
    for (const p of pieces(c.function.arguments, 16)) {
      events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] }));
    }
  }
  events.push(chunk({}, finish));
  if (body.stream_options?.include_usage) {
    events.push(
      `data: ${
        JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage })
      }`,
    );
  }
  events.push("data: [DONE]");
  return { reply, json, events };
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages

function anthropicReply(plan: Plan, model: string) {
  const id = `msg_${hex(12)}`;
  const blocks: Json[] = [];
  if (plan.reasoning) {
    blocks.push({ type: "thinking", thinking: plan.reasoning, signature: `fakesig_${hex(16)}` });
  }
  if (plan.content) blocks.push({ type: "text", text: plan.content });
  if (plan.tool) {
    blocks.push({
      type: "tool_use",
      id: `toolu_${hex(12)}`,
      name: plan.tool.name,
      input: plan.tool.args,
    });
  }
  const stop = plan.tool ? "tool_use" : "end_turn";
  const usage = { input_tokens: 100, output_tokens: 20 };
  const json = {
    id,
    type: "message",
    role: "assistant",
    model,
    content: blocks,
    stop_reason: stop,
    stop_sequence: null,
    usage,
  };
  const ev = (type: string, data: Json) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}`;
  const events = [
    ev("message_start", {
      message: {
        ...json,
        content: [],
        stop_reason: null,
        usage: { input_tokens: 100, output_tokens: 1 },
      },
    }),
    ev("ping", {}),
  ];
  blocks.forEach((b, index) => {
    if (b.type === "thinking") {
      events.push(
        ev("content_block_start", {
          index,
          content_block: { type: "thinking", thinking: "", signature: "" },
        }),
      );
      for (const p of pieces(b.thinking, 12)) {
        events.push(
          ev("content_block_delta", { index, delta: { type: "thinking_delta", thinking: p } }),
        );
      }
      events.push(
        ev("content_block_delta", {
          index,
          delta: { type: "signature_delta", signature: b.signature },
        }),
      );
    } else if (b.type === "text") {
      events.push(ev("content_block_start", { index, content_block: { type: "text", text: "" } }));
      for (const p of pieces(b.text, 24)) {
        events.push(ev("content_block_delta", { index, delta: { type: "text_delta", text: p } }));
      }
    } else {
      events.push(ev("content_block_start", {
        index,
        content_block: { type: "tool_use", id: b.id, name: b.name, input: {} },
      }));
      for (const p of pieces(pythonJson(b.input), 16)) {
        events.push(
          ev("content_block_delta", {
            index,
            delta: { type: "input_json_delta", partial_json: p },
          }),
        );
      }
    }
    events.push(ev("content_block_stop", { index }));
  });
  events.push(
    ev("message_delta", {
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: 20 },
    }),
  );
  events.push(ev("message_stop", {}));
  return { reply: { plan: plan.plan, blocks }, json, events };
}

// ---------------------------------------------------------------------------------------------
// Gemini generateContent

/** Google's error body for an HTTP status. */
function geminiError(status: number, message: string) {
  const names: Record<number, string> = { 404: "NOT_FOUND", 500: "INTERNAL", 503: "UNAVAILABLE" };
  return { error: { code: status, message, status: names[status] ?? "INVALID_ARGUMENT" } };
}

/**
 * As the Gemini API answers: thought parts first (`thought: true`), then text, then the function
 * call, whose part carries the `thoughtSignature` (a text-only answer carries it on its last
 * part). A stream sends each piece as its own `GenerateContentResponse` chunk, the last one with
 * `finishReason` and the complete `usageMetadata`.
 */
function geminiReply(plan: Plan, model: string) {
  const responseId = hex(8);
  const signature = `fakesig_${hex(16)}`;
  const parts: Json[] = [];
  if (plan.reasoning) parts.push({ text: plan.reasoning, thought: true });
  if (plan.content) parts.push({ text: plan.content });
  if (plan.tool) {
    parts.push({
      functionCall: { id: `call_${hex(12)}`, name: plan.tool.name, args: plan.tool.args },
    });
  }
  parts[parts.length - 1].thoughtSignature = signature;
  const usageMetadata = {
    promptTokenCount: 100,
    candidatesTokenCount: 15,
    totalTokenCount: 120,
    thoughtsTokenCount: 5,
  };
  const candidate = (chunkParts: Json[], finishReason?: string) => ({
    content: { parts: chunkParts, role: "model" },
    ...(finishReason ? { finishReason } : {}),
    index: 0,
  });
  const json = {
    candidates: [candidate(parts, "STOP")],
    usageMetadata,
    modelVersion: model,
    responseId,
  };
  const chunks: Json[][] = [];
  for (const part of parts) {
    if (part.functionCall) {
      chunks.push([part]);
      continue;
    }
    const texts = pieces(part.text, part.thought ? 12 : 24);
    texts.forEach((text, i) => {
      const piece: Json = { text };
      if (part.thought) piece.thought = true;
      if (part.thoughtSignature && i === texts.length - 1) piece.thoughtSignature = signature;
      chunks.push([piece]);
    });
  }
  const events = chunks.map((chunkParts, i) => {
    const last = i === chunks.length - 1;
    return `data: ${
      JSON.stringify({
        candidates: [candidate(chunkParts, last ? "STOP" : undefined)],
        usageMetadata: last ? usageMetadata : { promptTokenCount: 100, totalTokenCount: 100 },
        modelVersion: model,
        responseId,
      })
    }`;
  });
  return { reply: { plan: plan.plan, parts }, json, events };
}

// ---------------------------------------------------------------------------------------------
// The server

export interface FakeLlm {
  url: string;
  records: RecordedRequest[];
  close(): Promise<void>;
}

/** Starts the recording server on a free loopback port. */
export function startFakeLlm(options: FakeLlmOptions): FakeLlm {
  const records: RecordedRequest[] = [];
  let seq = 0;
  const write = (r: RecordedRequest) => {
    records.push(r);
    Deno.writeTextFileSync(options.out, JSON.stringify(r) + "\n", { append: true });
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const started = performance.now();
    const url = new URL(req.url);
    const raw = new Uint8Array(await req.arrayBuffer());
    const text = new TextDecoder().decode(raw);
    let body: Json = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = text;
    }
    const n = ++seq;
    const v1 = url.pathname.search(/\/v1(beta)?\//);
    const headers: Record<string, string> = {};
    req.headers.forEach((value, name) => (headers[name] = redact(name, value)));
    const base = {
      seq: n,
      ts: new Date().toISOString(),
      method: req.method,
      url: url.pathname + url.search,
      prefix: v1 > 0 ? url.pathname.slice(0, v1) : "",
      path: v1 >= 0 ? url.pathname.slice(v1) : url.pathname,
      query: Object.fromEntries(url.searchParams),
      http: "1.1",
      headers,
      body_bytes: Number(req.headers.get("content-length") ?? raw.length),
      body_bytes_decoded: raw.length,
      body,
    };
    const finish = (reply: Record<string, unknown>, response: RecordedRequest["response"]) =>
      write({ ...base, reply, response, ms: Math.round(performance.now() - started) });

    if (req.method === "GET" && url.pathname.endsWith("/models")) {
      const json = {
        object: "list",
        data: [{ id: "policy-model-v1", object: "model", owned_by: "rollgate" }],
      };
      finish({ plan: "models" }, { status: 200, type: "json", json });
      return Response.json(json);
    }
    const fault = options.faults?.[n];
    // Gemini: POST /v1beta/models/<model>:generateContent | :streamGenerateContent?alt=sse
    const gemini = /\/v1beta\/models\/(.+):(generateContent|streamGenerateContent)$/.exec(
      url.pathname,
    );
    if (fault && fault !== "json-to-stream") {
      const json = gemini
        ? geminiError(fault.status, "injected failure")
        : { error: { message: "injected failure", type: "server_error" } };
      finish({ plan: "fault" }, { status: fault.status, type: "json", json });
      return Response.json(json, { status: fault.status });
    }
    const anthropic = url.pathname.endsWith("/messages");
    const chat = url.pathname.endsWith("/chat/completions");
    if (
      req.method !== "POST" || (!anthropic && !chat && !gemini) || typeof body !== "object" ||
      !body
    ) {
      const message = `not served: ${req.method} ${url.pathname}`;
      const json = gemini || url.pathname.includes("/v1beta/")
        ? geminiError(404, message)
        : { error: { message } };
      finish({ plan: "unknown" }, { status: 404, type: "json", json });
      return Response.json(json, { status: 404 });
    }
    const model = gemini ? decodeURIComponent(gemini[1]) : body.model ?? "policy-model-v1";
    const system = anthropic
      ? textOf(body.system)
      : gemini
      ? textOf(body.systemInstruction)
      : textOf(
        (body.messages ?? []).find((m: Json) => ["system", "developer"].includes(m.role))?.content,
      );
    const messages = gemini
      ? body.contents ?? []
      : (body.messages ?? []).filter((m: Json) => !["system", "developer"].includes(m.role));
    const tools = gemini
      ? (body.tools ?? []).flatMap((t: Json) => t.functionDeclarations ?? [])
      : body.tools ?? [];
    const plan = decide(system, messages, tools);
    const made = anthropic
      ? anthropicReply(plan, model)
      : gemini
      ? geminiReply(plan, model)
      : chatReply(body, plan, model);
    const stream = gemini ? gemini[2] === "streamGenerateContent" : body.stream;
    if (!stream || fault === "json-to-stream") {
      finish(made.reply, { status: 200, type: "json", json: made.json });
      return Response.json(made.json);
    }
    finish(made.reply, { status: 200, type: "sse", events: made.events });
    const enc = new TextEncoder();
    const sse = new ReadableStream<Uint8Array>({
      async start(controller) {
        for (const e of made.events) {
          controller.enqueue(enc.encode(e + "\n\n"));
          await new Promise((r) => setTimeout(r, 2));
        }
        controller.close();
      },
    });
    return new Response(sse, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    records,
    close: () => server.shutdown(),
  };
}

// Standalone, for poking at a CLI by hand: `deno run -A tests/recordings/fake_llm.ts OUT.jsonl
// ['{"1":{"status":500}}']` prints the URL and records until stopped.
if (import.meta.main) {
  const [out, faultsJson] = Deno.args;
  const fake = startFakeLlm({ out, faults: faultsJson ? JSON.parse(faultsJson) : undefined });
  console.log(fake.url);
}
