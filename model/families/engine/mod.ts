/**
 * The `engine` family: for a model rollgate has no family for, the inference engine that serves
 * it (vLLM) renders every prompt with the model's own chat template and tokenizer, and reads the
 * sampled ids back with its own tool-call and reasoning parsers. Forced with
 * `--model-family engine` (never detected); the engine is given as an `EngineRendering`
 * (`generation/vllm_render.ts`). The model directory still supplies the tokenizer files (to
 * decode for people, and for the stop ids), which must be the served model's.
 *
 * Every prompt is a full render (`rendersInFull`): the turn path checks that it extends the
 * previous turn's prompt and output and starts a new chain, labelled with where the two first
 * differ, where it does not (`trajectory/turns/engine_prompt.ts`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { bindFamily } from "../mod.ts";
 * import { loadModelFiles } from "../../model_files.ts";
 * import { loadTokenizer } from "../../tokenizer.ts";
 * import type { EngineRendering } from "../engine_rendering.ts";
 *
 * const files = await loadModelFiles();
 * const tokenizer = await loadTokenizer(files);
 * // A stand-in engine: it renders every conversation as [1, 2, 3] and reads "hi" back.
 * const engine: EngineRendering = {
 *   where: "a stand-in engine",
 *   render: () => Promise.resolve([1, 2, 3]),
 *   parse: () => Promise.resolve({ content: "hi", toolCalls: [] }),
 * };
 * const format = await bindFamily({ files, tokenizer, family: "engine", rendering: engine });
 * assert.equal(format.rendersInFull, true);
 * const { ids } = await format.renderer.renderFull([{ role: "user", content: "hi" }], []);
 * assert.deepEqual(ids, [1, 2, 3]);
 * const { message } = await format.parser.parse([9, format.endOfTurn.id], () => "call_1");
 * assert.deepEqual(message, { role: "assistant", content: "hi" });
 * ```
 *
 * @module
 */
import { tokenText } from "../../model_files.ts";
import { SpecialText } from "../../special_text.ts";
import { turnIds } from "../chatml_ids.ts";
import { type ChatFormat, type FamilyContext, FamilyError, type ModelFamily } from "../family.ts";
import { EngineOutputParser, HeldBackStream } from "./engine_output.ts";
import { EngineRenderer } from "./engine_renderer.ts";

async function bind(ctx: FamilyContext): Promise<ChatFormat> {
  const engine = ctx.rendering;
  if (!engine) {
    throw new FamilyError(
      "--model-family engine needs the engine that renders: --render-url (default: --vllm-url)",
    );
  }
  const eos = tokenText(ctx.files.config.eos_token);
  if (eos === null || ctx.idOf(eos) === undefined) {
    throw new FamilyError(
      "engine: tokenizer_config.json needs an eos_token that is an added token",
    );
  }
  const ids = await turnIds(ctx, "engine", eos);
  const kwargs = ctx.templateKwargs;
  const parser = new EngineOutputParser(engine, kwargs, ids.stopTokenIds, ctx.tokenizer);
  return {
    family: "engine",
    rendersInFull: true,
    renderer: new EngineRenderer(engine, kwargs, new SpecialText(ctx.tokenizer.addedTokens)),
    parser,
    streamingParser: () => new HeldBackStream(),
    ...ids,
    quirks: {
      argumentRendering: "as the engine's chat template writes them",
      // Unknown here: every turn checks its render instead.
      dropsOldReasoning: false,
      promptOpensReasoning: false,
    },
    notes: [
      `engine family: ${engine.where} renders every prompt and parses every answer (its chat ` +
      "template, tokenizer, tool and reasoning parsers); a turn whose render does not extend " +
      "the previous prompt + output starts a rerender chain, labelled with where they differ",
    ],
  };
}

export const engine: ModelFamily = {
  name: "engine",
  summary: "any model the engine serves: it renders every prompt and parses the output",
  // The engine's template reads what it reads: passed on as chat_template_kwargs.
  templateOptions: "any",
  detect: () => false,
  bind,
};
