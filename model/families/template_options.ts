/**
 * Template settings a rollout may choose (`template` in `POST /api/rollouts`): each family
 * declares, next to its registry entry, the template variables it reads and the values each
 * takes. Settings are checked against that list before a rollout exists, so a typo is a clear
 * error instead of a variable the renderer silently ignores.
 *
 * @module
 */

/** The values a template variable takes: a list (`[true, false]`, `["low", "high"]`) or any text. */
type TemplateValues = readonly (boolean | string)[] | "text";

/**
 * The values each template variable of a family takes, by name: a family's `*_TEMPLATE_OPTIONS`
 * (read in `bind` with `templateValue`, `template_values.ts`).
 */
export type TemplateValueLists = Readonly<Record<string, TemplateValues>>;

/**
 * The template variables a family reads, by name (its `*_TEMPLATE_OPTIONS`). `"any"`: the family
 * renders with the model's own Jinja template, which may read any variable (the generic family).
 */
export type TemplateOptions = TemplateValueLists | "any";

/** A template setting the family does not read, or a value it does not take. */
export class TemplateSettingError extends Error {
  override name = "TemplateSettingError";
}

function describe(values: TemplateValues): string {
  return values === "text" ? "any text" : values.map((v) => JSON.stringify(v)).join(", ");
}

function accepts(values: TemplateValues, value: unknown): boolean {
  return values === "text" ? typeof value === "string" : values.includes(value as string);
}

/**
 * Checks `settings` against what `family` reads.
 *
 * @throws TemplateSettingError naming the unknown key (with the keys accepted) or the value not
 *   taken (with the values accepted)
 */
export function checkTemplateSettings(
  family: string,
  options: TemplateOptions,
  settings: Readonly<Record<string, unknown>>,
): void {
  if (options === "any") return;
  for (const [key, value] of Object.entries(settings)) {
    const values = Object.hasOwn(options, key) ? options[key] : undefined;
    if (values === undefined) {
      const known = Object.entries(options).map(([k, v]) => `${k} (${describe(v)})`);
      throw new TemplateSettingError(
        `template.${key}: ${family} reads no such template variable; it accepts ` +
          (known.length ? known.join("; ") : "none"),
      );
    }
    if (!accepts(values, value)) {
      throw new TemplateSettingError(
        `template.${key}: ${JSON.stringify(value)} is not a value ${family} takes; ` +
          `accepted: ${describe(values)}`,
      );
    }
  }
}
