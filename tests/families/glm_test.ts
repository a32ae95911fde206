/**
 * GLM-4.5, GLM-5 (GLM-4.7), GLM-5.1 and GLM-5.3 on a tokenizer double (the Qwen3 vocabulary plus GLM's
 * special tokens, `tests/support/tokenizer_doubles.ts`: no package ships GLM's tokenizer files),
 * checked against `renderers` (`glm-4.5`, `glm-5`, `glm-5.1`, `glm-5.3`) over generated conversations with
 * the format's hard cases: values holding `</arg_value>`, `<tool_call>`, `</tool_call>`,
 * booleans, floats, nested objects, unicode, parallel calls.
 */
import type { Message, ToolSpec } from "../../canonical/mod.ts";
import { GlmTextRenderer, pythonStrip } from "../../model/mod.ts";
import type { TemplateMessage } from "../../model/template_input.ts";
import { tokenizerDoubleDir } from "../support/tokenizer_doubles.ts";
import { registerFamilyChecks } from "./family_check.ts";
import { trimmed } from "./canonical_forms.ts";
import { GLM_MARKUP } from "./markup.ts";

const DIR = await tokenizerDoubleDir("glm-5");
globalThis.addEventListener("unload", () => Deno.removeSync(DIR, { recursive: true }));

const generator = { typedArguments: true, markup: GLM_MARKUP };

/**
 * `renderers`' `glm-4.5` drops the newline the model's template writes before the second and
 * later tool calls of a turn with content (`</tool_call>\n<tool_call>` → `</tool_call><tool_call>`).
 */
class RenderersGlm45 extends GlmTextRenderer {
  override assistantBody(m: TemplateMessage, afterLastUser: boolean): string {
    const calls = m.tool_calls ?? [];
    if (calls.length < 2 || !pythonStrip(m.content)) return super.assistantBody(m, afterLastUser);
    const head = super.assistantBody({ ...m, tool_calls: undefined }, afterLastUser);
    return head + "\n" + calls.map((c) => this.toolCall(c.function.name, c.function.arguments))
      .join("");
  }
}

const renderersGlm45 = new RenderersGlm45({
  layout: "glm-4.5",
  enableThinking: true,
  clearThinking: true,
});

registerFamilyChecks({
  label: "glm-4.5",
  model: { dir: DIR, family: "glm-4.5" },
  reference: {
    renderer: "glm-4.5",
    config: { enable_thinking: true },
    deviation: {
      what: "renderers drops the newline before later parallel calls after content",
      text: (messages: readonly Message[], tools: readonly ToolSpec[], prompt: boolean) =>
        renderersGlm45.render(messages, tools, { addGenerationPrompt: prompt }),
    },
  },
  generator,
  canonical: trimmed,
  count: 80,
  firstSeed: 20001,
});

registerFamilyChecks({
  label: "glm-5",
  model: { dir: DIR, family: "glm-5" },
  reference: { renderer: "glm-5", config: { enable_thinking: true } },
  generator,
  canonical: trimmed,
  count: 80,
  firstSeed: 21001,
});

registerFamilyChecks({
  label: "glm-5 clear_thinking=false",
  model: { dir: DIR, family: "glm-5", templateKwargs: { clear_thinking: false } },
  reference: { renderer: "glm-5", config: { enable_thinking: true, clear_thinking: false } },
  generator,
  canonical: trimmed,
  count: 40,
  firstSeed: 22001,
});

registerFamilyChecks({
  label: "glm-5.1",
  model: { dir: DIR, family: "glm-5.1" },
  reference: { renderer: "glm-5.1", config: { enable_thinking: true } },
  generator,
  canonical: trimmed,
  count: 60,
  firstSeed: 23001,
});

registerFamilyChecks({
  label: "glm-5.3",
  model: { dir: DIR, family: "glm-5.3" },
  reference: { renderer: "glm-5.3" },
  // Parallel results sometimes out of call order: the template (and the delta) order them.
  generator: { ...generator, resultsOutOfOrder: true },
  canonical: trimmed,
  count: 60,
  firstSeed: 24001,
});

registerFamilyChecks({
  label: "glm-5.3 clear_thinking=true reasoning_effort=low",
  model: {
    dir: DIR,
    family: "glm-5.3",
    templateKwargs: { clear_thinking: true, reasoning_effort: "low" },
  },
  reference: { renderer: "glm-5.3", config: { clear_thinking: true, reasoning_effort: "low" } },
  generator,
  canonical: trimmed,
  count: 40,
  firstSeed: 25001,
});
