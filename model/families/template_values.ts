/**
 * The template variables a family reads and the values each takes (`{ enable_thinking: [true,
 * false], reasoning_effort: ["low", "high", "max"] }`), declared next to the family as
 * `*_TEMPLATE_OPTIONS` (what per-rollout template settings are checked against), and how a family
 * reads one of them from `--template-kwargs` with its default.
 *
 * @module
 */
import { FamilyError } from "./family.ts";
import type { TemplateValueLists } from "./template_options.ts";

export type { TemplateValueLists };

/**
 * `kwargs[key]`, or `fallback` when unset.
 *
 * @throws FamilyError naming the accepted values when the value is not one of `options[key]`
 */
export function templateValue<T extends boolean | string>(
  family: string,
  options: TemplateValueLists,
  kwargs: Readonly<Record<string, unknown>>,
  key: string,
  fallback: T,
): T {
  const value = kwargs[key] ?? fallback;
  const accepted = options[key] ?? [];
  const ok = accepted === "text" ? typeof value === "string" : accepted.includes(value as T);
  if (!ok) {
    throw new FamilyError(
      `${family}: template variable ${key} is ${JSON.stringify(value)}; expected ` +
        (accepted === "text"
          ? "text"
          : "one of " + accepted.map((v) => JSON.stringify(v)).join(", ")),
    );
  }
  return value as T;
}
