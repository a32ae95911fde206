/**
 * Drift: the template would render a recorded answer differently from what was sampled (extra
 * newlines before a tool call, non-canonical tokenization, an empty think block the template
 * drops). rollgate keeps the sampled ids either way; the finding is reported per turn and the
 * `drift` label policy decides whether such a turn is trained.
 *
 * @module
 */
import type { Drift } from "./turn.ts";

const CONTEXT = 8;

/** First difference between a re-render and the sampled ids, or null when they agree. */
export function findDrift(rendered: readonly number[], sampled: readonly number[]): Drift | null {
  if (rendered.length === 0) return null;
  const n = Math.max(rendered.length, sampled.length);
  for (let i = 0; i < n; i++) {
    if (rendered[i] !== sampled[i]) {
      return {
        position: i,
        rendered: rendered.slice(i, i + CONTEXT),
        sampled: sampled.slice(i, i + CONTEXT),
      };
    }
  }
  return null;
}
