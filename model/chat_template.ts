/**
 * Rendering with the model's own Jinja chat template (`@huggingface/jinja`, the engine that
 * transformers.js uses; byte-identical to Python Jinja2 with transformers' settings on Qwen3
 * except for float formatting and integer-like object keys in tool schemas).
 *
 * @module
 */
import { Environment, Template } from "@huggingface/jinja";
import { type TokenizerConfig, tokenText } from "./model_files.ts";
import type { TemplateMessage, TemplateTool } from "./template_input.ts";

/**
 * `@huggingface/jinja` 0.5.11 ignores the argument of `str.strip/lstrip/rstrip(chars)` and always
 * strips whitespace; Python strips only `chars`. Qwen3 renders `reasoning_content.strip('\n')` and
 * `content.lstrip('\n')`, so reasoning or content with leading/trailing spaces rendered
 * differently from transformers. This gives the three methods Python's semantics when `chars` is
 * a string (without it they keep the engine's whitespace strip).
 */
function pythonStripMethods(): void {
  type Value = { value: unknown };
  type Method = { value: (args: Value[]) => unknown };
  type Builtins = Map<string, Method> & { pythonStrip?: true };
  type Constructor = new (value: unknown) => Value;
  const env = new Environment();
  env.set("s", "");
  const sample = env.lookupVariable("s") as unknown as { value: string; builtins: Builtins };
  const proto = Object.getPrototypeOf(sample);
  const getter = Object.getOwnPropertyDescriptor(proto, "builtins")?.get;
  const StringValue = proto.constructor as Constructor;
  const FunctionValue = sample.builtins.get("strip")?.constructor as Constructor | undefined;
  if (!getter || !FunctionValue) throw new Error("unexpected @huggingface/jinja internals");
  const stripWith = (s: string, chars: string, left: boolean, right: boolean) => {
    let a = 0, b = s.length;
    if (left) { while (a < b && chars.includes(s[a])) a++; }
    if (right) { while (b > a && chars.includes(s[b - 1])) b--; }
    return s.slice(a, b);
  };
  Object.defineProperty(proto, "builtins", {
    configurable: true,
    get(this: typeof sample) {
      const map = getter.call(this) as Builtins;
      if (map.pythonStrip) return map;
      map.pythonStrip = true;
      const methods = [["strip", true, true], ["lstrip", true, false], ["rstrip", false, true]];
      for (const [name, left, right] of methods as [string, boolean, boolean][]) {
        const original = map.get(name)!;
        map.set(
          name,
          new FunctionValue((args: Value[]) =>
            args[0] instanceof StringValue
              ? new StringValue(stripWith(this.value, args[0].value as string, left, right))
              : original.value(args)
          ) as Method,
        );
      }
      return map;
    },
  });
}
pythonStripMethods();

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
   * import { ChatTemplate } from "./chat_template.ts";
   * declare const template: ChatTemplate;
   *
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
