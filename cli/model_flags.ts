/**
 * The flags that say which policy model a verb speaks (`serve`, `audit`): its files, its family,
 * the output parser of the generic family and the template variables, each with an environment
 * variable. One parser for every verb, so the gateway and the audit of its data agree.
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
import type { PolicyModelOptions } from "../model/mod.ts";
import { UsageError } from "./usage_error.ts";

/** `parseArgs` options of the model flags. */
export const MODEL_FLAGS = {
  "model-dir": { type: "string" },
  "model-family": { type: "string" },
  "tool-parser": { type: "string" },
  "template-kwargs": { type: "string" },
} as const;

export type ModelFlagValues = { [K in keyof typeof MODEL_FLAGS]?: string };

/** The flags as `PolicyModel.load` options; an environment variable stands in for each flag. */
export function modelOptions(values: ModelFlagValues): PolicyModelOptions {
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
  return {
    dir: values["model-dir"] ?? env("ROLLGATE_MODEL_DIR"),
    family: values["model-family"] ?? env("ROLLGATE_MODEL_FAMILY"),
    toolParser: values["tool-parser"] ?? env("ROLLGATE_TOOL_PARSER"),
    templateKwargs,
  };
}
