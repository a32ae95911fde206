/**
 * One turn's delta render for Qwen3, in the bundled template's Jinja and in code
 * (`model/families/qwen3/render.ts`): the synthetic `[user, assistant, …new]` conversation a
 * delta is cut from, its new messages two tool results of ~1.5 kB, with the generation prompt. The
 * floor beside them: `JSON.stringify` of the same messages.
 *
 *     deno bench -A bench/template_render_bench.ts
 *
 * @module
 */
import type { Message } from "../canonical/mod.ts";
import { PolicyModel } from "../model/mod.ts";
import type { TokenizedRenderer } from "../model/families/text_renderer.ts";
import { Qwen3TextRenderer } from "../model/families/qwen3/render.ts";

const model = await PolicyModel.load();
const code = (model.format.renderer as TokenizedRenderer).text;
if (!(code instanceof Qwen3TextRenderer)) throw new Error("the bundled model renders in Jinja");
const jinja = code.template;

const output = "def f(x):\n    return x + 1\n".repeat(50);
const messages: Message[] = [
  { role: "user", content: "." },
  { role: "assistant", content: "\u2063anchor\u2063" },
  { role: "tool", content: output, tool_call_id: "a" },
  { role: "tool", content: output + "\n", tool_call_id: "b" },
];
const options = { addGenerationPrompt: true };
if (jinja.render(messages, [], options) !== code.render(messages, [], options)) {
  throw new Error("the two renders differ");
}

Deno.bench("floor: JSON.stringify of the messages", () => void JSON.stringify(messages));
Deno.bench(
  "delta render, Jinja",
  { baseline: true },
  () => void jinja.render(messages, [], options),
);
Deno.bench("delta render, code", () => void code.render(messages, [], options));
