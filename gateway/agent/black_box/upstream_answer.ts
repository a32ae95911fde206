/**
 * A hosted API's final response, read back into the canonical assistant message for the
 * black-box record. Each protocol's request converter already knows how an assistant turn looks
 * in that protocol (clients echo answers back in requests), so the response is wrapped as the
 * last message of a minimal request and converted by the same code.
 *
 * @module
 */
import type { AssistantMessage, Protocol } from "../../../canonical/mod.ts";
import { toCanonicalRequest as fromAnthropic } from "../anthropic/mod.ts";
import { toCanonicalRequest as fromChat } from "../openai_chat/mod.ts";
import { toCanonicalRequest as fromResponses } from "../responses/mod.ts";

export interface UpstreamAnswer {
  message: AssistantMessage;
  usage: { input_tokens: number; output_tokens: number };
}

// deno-lint-ignore no-explicit-any
type Json = any;

function lastAssistant(messages: { role: string }[]): AssistantMessage {
  const last = messages.at(-1);
  return last?.role === "assistant" ? last as AssistantMessage : { role: "assistant", content: "" };
}

export function upstreamAnswer(protocol: Protocol, final: Json): UpstreamAnswer {
  const user = { role: "user", content: "." };
  if (protocol === "anthropic") {
    const req = fromAnthropic({
      model: "m",
      max_tokens: 1,
      messages: [user, { role: "assistant", content: final.content ?? [] }],
    });
    return {
      message: lastAssistant(req.messages),
      usage: {
        input_tokens: (final.usage?.input_tokens ?? 0) +
          (final.usage?.cache_read_input_tokens ?? 0) +
          (final.usage?.cache_creation_input_tokens ?? 0),
        output_tokens: final.usage?.output_tokens ?? 0,
      },
    };
  }
  if (protocol === "chat") {
    const message = { ...final.choices?.[0]?.message, role: "assistant" };
    const req = fromChat({ model: "m", messages: [user, message] });
    return {
      message: lastAssistant(req.messages),
      usage: {
        input_tokens: final.usage?.prompt_tokens ?? 0,
        output_tokens: final.usage?.completion_tokens ?? 0,
      },
    };
  }
  const req = fromResponses({ model: "m", input: [user, ...(final.output ?? [])] });
  return {
    message: lastAssistant(req.messages),
    usage: {
      input_tokens: final.usage?.input_tokens ?? 0,
      output_tokens: final.usage?.output_tokens ?? 0,
    },
  };
}
