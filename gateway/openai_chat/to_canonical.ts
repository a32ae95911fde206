/**
 * Chat Completions request → canonical request. The canonical form is already chat-shaped, so this
 * is mostly flattening: array contents become strings, `developer` becomes `system`, tool calls
 * lose their wire envelope. Nothing is merged or reordered here: system-message placement is the
 * template's business, and history matching needs the messages one-to-one with the wire.
 *
 * @module
 */
import type { z } from "zod";
import type {
  CanonicalRequest,
  Message,
  SamplingParams,
  ToolCall,
  ToolSpec,
} from "../../canonical/mod.ts";
import { InvalidRequestError } from "../protocol.ts";
import {
  type ChatContent,
  type ChatMessage,
  type ChatRequest,
  ChatRequestSchema,
  type ChatTool,
} from "./schema.ts";

/**
 * What a `custom` (free-form) tool looks like to the template: one string argument `input`.
 * A fresh object per call, so no request can alter another's tool list.
 */
function customToolParameters(): Record<string, unknown> {
  return { type: "object", properties: { input: { type: "string" } }, required: ["input"] };
}

/** Validates a Chat Completions body and converts it; throws `InvalidRequestError`. */
export function toCanonicalRequest(body: unknown): CanonicalRequest {
  const parsed = ChatRequestSchema.safeParse(body);
  if (!parsed.success) {
    throw new InvalidRequestError(`invalid chat completions request: ${describe(parsed.error)}`);
  }
  const req = parsed.data;
  return {
    protocol: "chat",
    model: req.model,
    messages: req.messages.map(toMessage),
    tools: (req.tools ?? []).flatMap(toToolSpec),
    sampling: toSampling(req),
    stream: req.stream ?? false,
    includeUsage: req.stream_options?.include_usage === true,
  };
}

/** One line naming each offending field, e.g. `messages[2].tool_call_id: Invalid input: …`. */
function describe(error: z.ZodError): string {
  return error.issues.flatMap((issue) => explain(issue, [])).join("; ");
}

/**
 * `path: message` lines for one issue. A failed union (e.g. `content`: string, null or parts)
 * only says "Invalid input"; the branch whose error lies deepest is the one the client meant, so
 * its issues are reported instead, or, when no branch got anywhere, the types it would accept.
 */
function explain(issue: z.core.$ZodIssue, prefix: PropertyKey[]): string[] {
  const path = [...prefix, ...issue.path];
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    const depth = (branch: z.core.$ZodIssue[]) => Math.max(...branch.map((i) => i.path.length));
    const best = issue.errors.reduce((a, b) => depth(b) > depth(a) ? b : a);
    if (depth(best) > 0) return best.flatMap((inner) => explain(inner, path));
    const expected = issue.errors.flat().flatMap((i) =>
      i.code === "invalid_type" ? [i.expected] : []
    );
    if (expected.length > 0) return [`${formatPath(path)}: expected ${expected.join(" | ")}`];
  }
  return [`${formatPath(path)}: ${issue.message}`];
}

/** `["messages", 2, "role"]` → `messages[2].role`; the empty path is the body itself. */
function formatPath(path: PropertyKey[]): string {
  const text = path
    .map((key, i) => typeof key === "number" ? `[${key}]` : `${i ? "." : ""}${String(key)}`)
    .join("");
  return text || "body";
}

/** Parts are joined with newlines; media only leaves a marker, the policy cannot see it anyway. */
export function flattenContent(content: ChatContent | undefined): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content
    .map((part) => {
      switch (part.type) {
        case "text":
          return part.text;
        case "refusal":
          return part.refusal;
        case "image_url":
          return "[image]";
        case "input_audio":
          return "[audio]";
        case "file":
          return "[file]";
      }
    })
    .join("\n");
}

function toMessage(message: ChatMessage): Message {
  switch (message.role) {
    case "system":
    case "developer":
      return { role: "system", content: flattenContent(message.content) };
    case "user":
      return { role: "user", content: flattenContent(message.content) };
    case "tool":
      return {
        role: "tool",
        content: flattenContent(message.content),
        tool_call_id: message.tool_call_id,
      };
    case "function":
      return { role: "tool", content: flattenContent(message.content), tool_call_id: message.name };
    case "assistant": {
      const reasoning = message.reasoning_content ||
        (typeof message.reasoning === "string" ? message.reasoning : "");
      const calls: ToolCall[] = (message.tool_calls ?? []).map((call) =>
        call.type === "custom"
          ? {
            id: call.id,
            name: call.custom.name,
            arguments: JSON.stringify({ input: call.custom.input }),
            kind: "custom",
          }
          : { id: call.id, name: call.function.name, arguments: call.function.arguments }
      );
      if (message.function_call) {
        // Legacy calls have no id; the legacy `function` result links back by name.
        const { name, arguments: args } = message.function_call;
        calls.push({ id: name, name, arguments: args });
      }
      return {
        role: "assistant",
        content: flattenContent(message.content),
        ...(reasoning ? { reasoning_content: reasoning } : {}),
        ...(calls.length ? { tool_calls: calls } : {}),
      };
    }
  }
}

/** Function and custom tools are kept; other kinds (e.g. hosted tools) cannot be rendered. */
function toToolSpec(tool: ChatTool): ToolSpec[] {
  if (tool.type === "function" && tool.function) {
    const { name, description, parameters } = tool.function;
    return [{
      name,
      ...(description ? { description } : {}),
      parameters: parameters ?? { type: "object", properties: {} },
      kind: "function",
      raw: tool,
    }];
  }
  if (tool.type === "custom" && tool.custom) {
    const { name, description } = tool.custom;
    return [{
      name,
      ...(description ? { description } : {}),
      parameters: customToolParameters(),
      kind: "custom",
      raw: tool,
    }];
  }
  return [];
}

/** `max_completion_tokens` is the current name; `max_tokens` the deprecated one. */
function toSampling(req: ChatRequest): SamplingParams {
  const sampling: SamplingParams = {};
  const maxTokens = req.max_completion_tokens ?? req.max_tokens;
  if (maxTokens != null) sampling.max_tokens = maxTokens;
  if (req.temperature != null) sampling.temperature = req.temperature;
  if (req.top_p != null) sampling.top_p = req.top_p;
  if (req.stop != null) sampling.stop = typeof req.stop === "string" ? [req.stop] : req.stop;
  return sampling;
}
