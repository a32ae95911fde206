/**
 * A tool call's arguments as the JSON object protocols with structured arguments send (Anthropic
 * `input`, Gemini `functionCall.args`), from the string the model wrote.
 *
 * @example
 * ```ts
 * import { argumentsObject } from "./tool_arguments.ts";
 *
 * argumentsObject('{"command": "ls"}'); // { command: "ls" }
 * argumentsObject("[1]"); // {}
 * ```
 *
 * @module
 */

/**
 * The caller guarantees the arguments are a JSON object; `{}` is only a guard so a bad value
 * never becomes a non-object, which clients reject.
 */
export function argumentsObject(args: string): Record<string, unknown> {
  try {
    const input: unknown = JSON.parse(args);
    if (typeof input === "object" && input !== null && !Array.isArray(input)) {
      return input as Record<string, unknown>;
    }
  } catch {
    // fall through
  }
  return {};
}
