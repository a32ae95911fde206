/**
 * The gateway's `thoughtSignature`: the turn's reasoning, carried by the client.
 *
 * Gemini clients drop thought parts from the history they send back (the Gemini CLI filters them
 * out) but keep a part's `thoughtSignature` verbatim, as the real API needs its encrypted thought
 * state back. The gateway's signature is that state in the clear: base64 (the API's type is
 * bytes, so every SDK accepts it) of `rollgate:<turn id>\n<reasoning>`. The echoed history then
 * holds the reasoning the policy sampled, so the turn matches the recorded one; the turn id makes
 * an echo traceable. A signature the gateway did not write (Google's, the CLI's
 * `skip_thought_signature_validator`) reads as no reasoning.
 *
 * @example
 * ```ts
 * import { reasoningOf, thoughtSignature } from "./thought_signature.ts";
 *
 * const signature = thoughtSignature("t_1", "Let me look.");
 * reasoningOf(signature); // "Let me look."
 * reasoningOf("skip_thought_signature_validator"); // undefined
 * ```
 *
 * @module
 */

import { Buffer } from "node:buffer";

const PREFIX = "rollgate:";

/** The signature for a turn's reasoning. */
export function thoughtSignature(turnId: string, reasoning: string): string {
  return Buffer.from(`${PREFIX}${turnId}\n${reasoning}`, "utf8").toString("base64");
}

/** The reasoning a gateway signature carries; `undefined` for any other value. */
export function reasoningOf(signature: string): string | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(signature)) return undefined;
  const text = Buffer.from(signature, "base64").toString("utf8");
  if (!text.startsWith(PREFIX)) return undefined;
  const newline = text.indexOf("\n");
  return newline < 0 ? undefined : text.slice(newline + 1);
}
