/**
 * vLLM's render API on the wire (vLLM 0.32; served with `--enable-scale-out`, or by a dedicated
 * `vllm launch render` server), as pure conversions. Recorded bodies and answers:
 * `__fixtures__/vllm_render/` (`vllm_render_wire_test.ts`).
 *
 * - `POST /v1/chat/completions/render` takes a chat completion request (vLLM's
 *   `ChatCompletionRequest`: `messages`, `tools`, `chat_template_kwargs`,
 *   `add_generation_prompt`) and answers the `GenerateRequest` its chat endpoint would hand the
 *   engine: `token_ids` are the prompt (the model's chat template, rendered and tokenized by the
 *   server). An assistant message's reasoning goes in `reasoning` (vLLM reads that key, not
 *   `reasoning_content`); tool-call arguments are JSON text, which vLLM parses for the template.
 * - `POST /v1/chat/completions/derender` takes sampled ids as a `GenerateResponse`
 *   (`generate_response.choices[0].token_ids`, the prompt in `generate_response.prompt_token_ids`:
 *   parsers read whether it left reasoning open) and the request's tools in `chat_request`, and
 *   answers the `ChatCompletionResponse` the server's own parsers make of them
 *   (`--tool-call-parser`, `--reasoning-parser`): `choices[0].message` with `content`,
 *   `reasoning` and `tool_calls[].function` `{name, arguments}`. Without a parser it is the
 *   decoded text (special tokens skipped). End-of-turn ids are left off the ids sent: with a
 *   parser configured, vLLM would decode them into the content.
 *
 * @module
 */
import type { EngineAnswer, EngineParseRequest, EngineRenderRequest } from "../model/mod.ts";
import { toTemplateMessages, toTemplateTools } from "../model/mod.ts";
import { GenerationError } from "./backend.ts";

/** The messages as vLLM's chat request takes them (the template input, reasoning renamed). */
function vllmMessages(request: EngineRenderRequest["messages"]): Record<string, unknown>[] {
  return toTemplateMessages(request).map(({ reasoning_content, ...m }) =>
    reasoning_content === undefined ? m : { ...m, reasoning: reasoning_content }
  );
}

/** What every request of the render API names besides its own fields. */
function common(
  tools: EngineRenderRequest["tools"],
  templateKwargs: EngineRenderRequest["templateKwargs"],
  model: string | undefined,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (model) body.model = model;
  if (tools.length > 0) body.tools = toTemplateTools(tools);
  if (Object.keys(templateKwargs).length > 0) body.chat_template_kwargs = templateKwargs;
  return body;
}

/** The body of `POST /v1/chat/completions/render` for `request`. */
export function renderBody(request: EngineRenderRequest, model?: string): Record<string, unknown> {
  return {
    ...common(request.tools, request.templateKwargs, model),
    messages: vllmMessages(request.messages),
    add_generation_prompt: request.addGenerationPrompt,
  };
}

function isIds(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((t) => Number.isInteger(t) && t >= 0);
}

/** The prompt ids of a render answer; `where` names the engine in errors. */
export function renderedIds(json: unknown, where: string): number[] {
  const ids = (json as { token_ids?: unknown } | null)?.token_ids;
  if (!isIds(ids) || ids.length === 0) {
    throw new GenerationError("engine_failed", `${where} answered a render without token_ids`);
  }
  return ids;
}

/** The body of `POST /v1/chat/completions/derender` for `request`. */
export function derenderBody(request: EngineParseRequest, model?: string): Record<string, unknown> {
  const chat = common(request.tools, request.templateKwargs, model);
  return {
    ...(model ? { model } : {}),
    generate_response: {
      request_id: "rollgate",
      choices: [{ index: 0, token_ids: request.outputIds, finish_reason: "stop" }],
      prompt_token_ids: request.promptIds,
    },
    // The parsers read the request's tools and template settings, never its messages.
    chat_request: { ...chat, messages: [] },
  };
}

interface WireToolCall {
  function?: { name?: unknown; arguments?: unknown };
}

/** The assistant message the engine's parsers made of the ids; `where` names it in errors. */
export function derenderedAnswer(json: unknown, where: string): EngineAnswer {
  const message = (json as { choices?: { message?: unknown }[] } | null)?.choices?.[0]
    ?.message as
      | {
        content?: unknown;
        reasoning?: unknown;
        reasoning_content?: unknown;
        tool_calls?: unknown;
      }
      | undefined;
  if (!message || typeof message !== "object") {
    throw new GenerationError("engine_failed", `${where} answered a derender without a message`);
  }
  const text = (v: unknown, field: string): string | undefined => {
    if (v === undefined || v === null) return undefined;
    if (typeof v === "string") return v;
    throw new GenerationError("engine_failed", `${where} answered ${field} that is not text`);
  };
  const calls = message.tool_calls ?? [];
  if (!Array.isArray(calls)) {
    throw new GenerationError("engine_failed", `${where} answered tool_calls that is not a list`);
  }
  const answer: EngineAnswer = {
    content: text(message.content, "content") ?? "",
    toolCalls: (calls as WireToolCall[]).map((c, i) => ({
      name: text(c.function?.name, `tool_calls[${i}].function.name`) ?? "",
      arguments: text(c.function?.arguments, `tool_calls[${i}].function.arguments`) ?? "{}",
    })),
  };
  const reasoning = text(message.reasoning ?? message.reasoning_content, "reasoning");
  if (reasoning) answer.reasoning = reasoning;
  return answer;
}
