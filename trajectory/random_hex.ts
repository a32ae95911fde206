/**
 * Random ids: `bytes` random bytes as lowercase hex, from the platform's secure generator.
 *
 * @module
 */
import { randomBytes } from "node:crypto";

export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString("hex");
}
