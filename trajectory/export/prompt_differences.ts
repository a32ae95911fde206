/**
 * Where a turn's prompt differs from a full render of its history, every place, each put where it
 * belongs: inside an earlier turn's generation prompt + sampled ids (kept verbatim by design, so
 * a re-render may write them otherwise: dropped reasoning, an empty think block tokenized across
 * the generation prompt, harmony's history forms), or elsewhere (content the gateway rendered
 * otherwise: a defect). Used by `audit`.
 *
 * @module
 */

/** An earlier turn's kept ids in the prompt: its generation prompt, then its sampled ids. */
export interface KeptWindow {
  /** The earlier turn's id. */
  turn: string;
  /** Where its generation prompt starts in the prompt. */
  start: number;
  /** Where its sampled ids start (the generation prompt's end). */
  output: number;
  /** Past its last sampled id. */
  end: number;
}

/** One place where the prompt and the full render differ. */
export interface PromptDifference {
  /** The earlier turn whose kept ids hold it; null: outside every kept window. */
  turn: string | null;
  /** Where it lies: the earlier turn's generation prompt, its sampled ids, both, or elsewhere. */
  in: "generation_prompt" | "sampled_ids" | "generation_prompt_and_sampled_ids" | "elsewhere";
  /** Gateway prompt range `[start, end)`. */
  gateway: [number, number];
  /** Full render range `[start, end)`; the rest of the render when it could not be placed. */
  full_render: [number, number];
}

function equalRange(
  a: ArrayLike<number>,
  [a0, a1]: [number, number],
  b: ArrayLike<number>,
  b0: number,
): boolean {
  for (let i = a0; i < a1; i++) if (a[i] !== b[b0 + i - a0]) return false;
  return true;
}

/** First position ≥ `from` where `prompt[p0, p1)` occurs in `full`, or -1. */
function find(
  full: ArrayLike<number>,
  prompt: ArrayLike<number>,
  [p0, p1]: [number, number],
  from: number,
): number {
  if (p1 === p0) return from;
  for (let i = from; i + (p1 - p0) <= full.length; i++) {
    if (full[i] === prompt[p0] && equalRange(prompt, [p0, p1], full, i)) return i;
  }
  return -1;
}

function where(w: KeptWindow, [a, b]: [number, number]): PromptDifference["in"] {
  if (b <= w.output && a < w.output) return "generation_prompt";
  if (a >= w.output) return "sampled_ids";
  return "generation_prompt_and_sampled_ids";
}

/**
 * Every difference between `prompt` and `full`. The ids outside `windows` (sorted, disjoint) must
 * appear in `full` in order, the last piece at the end; each window is compared with what lies
 * between its neighbours there. A last piece that differs inside is one difference `elsewhere`;
 * once an earlier piece cannot be found, the rest is one difference `elsewhere`.
 */
export function promptDifferences(
  prompt: ArrayLike<number>,
  full: ArrayLike<number>,
  windows: readonly KeptWindow[],
): PromptDifference[] {
  const found: PromptDifference[] = [];
  const elsewhere = (at: number, fullAt: number) =>
    found.push({
      turn: null,
      in: "elsewhere",
      gateway: [at, prompt.length],
      full_render: [fullAt, full.length],
    });
  // The first piece is anchored at the start, the last at the end.
  const firstEnd = windows.length ? windows[0].start : prompt.length;
  for (let i = 0; i < firstEnd; i++) {
    if (prompt[i] !== full[i]) {
      elsewhere(i, i);
      return found;
    }
  }
  let at = firstEnd;
  for (const [k, w] of windows.entries()) {
    const next: [number, number] = [w.end, windows[k + 1]?.start ?? prompt.length];
    const last = k === windows.length - 1;
    const placed = last ? full.length - (next[1] - next[0]) : find(full, prompt, next, at);
    if (placed < at || placed < 0) {
      elsewhere(w.start, at);
      return found;
    }
    // Narrowed to what differs: the common ids at both ends of the window are not a difference.
    let head = 0, tail = 0;
    const g = w.end - w.start, f = placed - at;
    while (head < g && head < f && prompt[w.start + head] === full[at + head]) head++;
    while (
      tail < g - head && tail < f - head && prompt[w.end - 1 - tail] === full[placed - 1 - tail]
    ) tail++;
    if (head < g || head < f) {
      const gateway: [number, number] = [w.start + head, w.end - tail];
      found.push({
        turn: w.turn,
        in: where(w, gateway),
        gateway,
        full_render: [at + head, placed - tail],
      });
    }
    // Only the last piece, placed at the end, can differ inside: narrowed as a window is.
    if (!equalRange(prompt, next, full, placed)) {
      const shift = placed - next[0];
      let a = next[0], b = next[1];
      while (prompt[a] === full[a + shift]) a++;
      while (prompt[b - 1] === full[b - 1 + shift]) b--;
      found.push({
        turn: null,
        in: "elsewhere",
        gateway: [a, b],
        full_render: [a + shift, b + shift],
      });
    }
    at = placed + next[1] - next[0];
  }
  if (!windows.length && full.length !== prompt.length) elsewhere(firstEnd, firstEnd);
  return found;
}
