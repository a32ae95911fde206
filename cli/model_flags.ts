/**
 * The flags that say which policy model a verb speaks (`serve`, `audit`): its files, its family,
 * the output parser of the generic family, the template variables and, for the `engine` family,
 * the vLLM server that renders (`--render-url`, by default the generating vLLM), each with an
 * environment variable. One parser for every verb, so the gateway and the audit of its data agree.
 *
 * @example
 * ```ts
 * import { modelOptions } from "./model_flags.ts";
 *
 * modelOptions({ "model-family": "qwen3.6", "template-kwargs": '{"preserve_thinking": true}' });
 * // { dir: undefined, family: "qwen3.6", toolParser: undefined, templateKwargs: { preserve_thinking: true } }
 * ```
 *
 * @module
 */
import { VllmRender } from "../generation/mod.ts";
import type { PolicyModelOptions } from "../model/mod.ts";
import { UsageError } from "./usage_error.ts";

/** `parseArgs` options of the model flags. */
export const MODEL_FLAGS = {
  "model-dir": { type: "string" },
  "model-family": { type: "string" },
  "tool-parser": { type: "string" },
  "template-kwargs": { type: "string" },
  "render-url": { type: "string" },
} as const;

export type ModelFlagValues = { [K in keyof typeof MODEL_FLAGS]?: string };

/** The engine a verb talks to besides the model flags: `serve`'s vLLM, the render's default. */
export interface EngineFlags {
  url?: string;
  /** The served model name (`--engine-model`). */
  model?: string;
  timeoutMs?: number;
  retries?: number;
}

/**
 * The flags as `PolicyModel.load` options; an environment variable stands in for each flag.
 * `engine` is where `--model-family engine` renders when `--render-url` is not given.
 */
export function modelOptions(
  values: ModelFlagValues,
  engine: EngineFlags = {},
): PolicyModelOptions {
  const env = (k: string) => Deno.env.get(k) || undefined;
  const kwargs = values["template-kwargs"] ?? env("ROLLGATE_TEMPLATE_KWARGS");
  let templateKwargs: Record<string, unknown> | undefined;
  if (kwargs !== undefined) {
    try {
      templateKwargs = JSON.parse(kwargs);
    } catch (e) {
      throw new UsageError(`--template-kwargs must be a JSON object: ${(e as Error).message}`);
    }
    if (
      typeof templateKwargs !== "object" || templateKwargs === null || Array.isArray(templateKwargs)
    ) {
      throw new UsageError(`--template-kwargs must be a JSON object, got ${kwargs}`);
    }
  }
  const dir = values["model-dir"] ?? env("ROLLGATE_MODEL_DIR");
  const family = values["model-family"] ?? env("ROLLGATE_MODEL_FAMILY");
  const renderUrl = values["render-url"] ?? env("ROLLGATE_RENDER_URL");
  if (family !== "engine") {
    if (renderUrl) throw new UsageError("--render-url is for --model-family engine");
    return {
      dir,
      family,
      toolParser: values["tool-parser"] ?? env("ROLLGATE_TOOL_PARSER"),
      templateKwargs,
    };
  }
  const url = renderUrl ?? engine.url;
  if (!url) {
    throw new UsageError(
      "--model-family engine needs a vLLM server to render: --render-url URL (default: --vllm-url)",
    );
  }
  if (!dir) {
    throw new UsageError(
      "--model-family engine needs --model-dir: the served model's tokenizer files (to decode ids)",
    );
  }
  const { model, ...http } = engine;
  return {
    dir,
    family,
    toolParser: values["tool-parser"] ?? env("ROLLGATE_TOOL_PARSER"),
    templateKwargs,
    rendering: new VllmRender({ ...http, url, model }),
  };
}
