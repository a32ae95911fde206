/**
 * Rendering with the model's own Jinja chat template (`@huggingface/jinja`, the engine that
 * transformers.js uses; byte-identical to Python Jinja2 with transformers' settings on Qwen3
 * except for float formatting and integer-like object keys in tool schemas).
 *
 * @module
 */
import { Template } from "@huggingface/jinja";
import { tokenText, type TokenizerConfig } from "./model_files.ts";
import type { TemplateMessage, TemplateTool } from "./template_input.ts";

export interface RenderOptions {
  addGenerationPrompt: boolean;
  /** Extra template variables, e.g. `{ enable_thinking: false }`. */
  kwargs?: Record<string, unknown>;
}

export class ChatTemplate {
  readonly #template: Template;
  readonly #specials: Record<string, string | null>;

  constructor(readonly source: string, config: TokenizerConfig) {
    this.#template = new Template(source);
    this.#specials = {
      bos_token: tokenText(config.bos_token),
      eos_token: tokenText(config.eos_token),
      pad_token: tokenText(config.pad_token),
    };
  }

  /**
   * @example
   * ```ts
   * template.render([{ role: "user", content: "hi" }], [], { addGenerationPrompt: true });
   * // "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
   * ```
   */
  render(messages: TemplateMessage[], tools: TemplateTool[], options: RenderOptions): string {
    return this.#template.render({
      ...this.#specials,
      ...options.kwargs,
      messages,
      tools: tools.length > 0 ? tools : undefined,
      add_generation_prompt: options.addGenerationPrompt,
    });
  }
}
