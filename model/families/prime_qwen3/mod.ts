/**
 * Prime-Qwen3 (PrimeIntellect's Qwen3-0.6B and -1.7B): ChatML on Qwen3's vocabulary with
 * Qwen3-Coder's XML tool calls and declarations; no reasoning opened by the prompt (the policy
 * may write `<think>…</think>` before a final answer, which history keeps; before calls history
 * keeps none). Written in code (`render.ts`), parsed with the Qwen3.5 XML parser.
 *
 * Detection: a template with XML calls, `<think>` and Qwen3-Coder's default tool system text
 * (Qwen3-Coder's own template has no `<think>`, Qwen3.5's no such default).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelFiles } from "../../model_files.ts";
 * import { primeQwen3 } from "./mod.ts";
 *
 * const files = (chat_template: string) => ({ config: { chat_template } }) as unknown as ModelFiles;
 * const coder = "<function=name><parameter=x>You are Qwen, a helpful AI assistant that can " +
 *   "interact with a computer to solve tasks.";
 * assert.ok(primeQwen3.detect(files(coder + "<think>")));
 * assert.ok(!primeQwen3.detect(files(coder))); // Qwen3-Coder
 * ```
 *
 * @module
 */
import type { ModelFiles } from "../../model_files.ts";
import type { ChatFormat, FamilyContext, ModelFamily } from "../family.ts";
import { chatmlXmlOutput, hasXmlToolCalls } from "../qwen35/mod.ts";
import { TokenizedRenderer } from "../text_renderer.ts";
import { PrimeQwen3TextRenderer } from "./render.ts";

const NAME = "prime-qwen3";

async function bind(ctx: FamilyContext): Promise<ChatFormat> {
  const { ids, output } = await chatmlXmlOutput(ctx, NAME, false);
  return {
    family: NAME,
    renderer: new TokenizedRenderer(
      new PrimeQwen3TextRenderer(),
      ctx.tokenizer,
      "<|im_end|>",
      "<|im_start|>",
    ),
    ...output,
    ...ids,
    quirks: {
      argumentRendering:
        "XML <parameter> values: strings raw, containers JSON, scalars Python str() (True, None)",
      // A turn with calls is written without its reasoning, in a tool loop too.
      dropsOldReasoning: true,
      promptOpensReasoning: false,
    },
  };
}

function template(files: ModelFiles): string {
  return files.config.chat_template ?? "";
}

export const primeQwen3: ModelFamily = {
  name: NAME,
  // Its template reads no variable.
  templateOptions: {},
  summary: "Prime-Qwen3: Qwen3 with Qwen3-Coder's XML calls and declarations",
  detect: (files) => {
    const t = template(files);
    return hasXmlToolCalls(t) && t.includes("<think>") &&
      t.includes("interact with a computer to solve tasks");
  },
  bind,
};
