/**
 * Inline SVG charts drawn on the server (no script, no library, nothing fetched): a frame with
 * axes, ticks and grid lines, and the marks each plot places in it. Every mark carries the value
 * it stands for (`data-x`, `data-y`, `data-n`, …) beside its position, so what is drawn can be read
 * back and checked.
 *
 * @module
 */
import type { Child, FC } from "hono/jsx";

export const WIDTH = 480;
export const HEIGHT = 240;
const MARGIN = { left: 52, right: 26, top: 24, bottom: 40 };

/** An axis: its span, where its ticks go and how they read. */
export interface Axis {
  min: number;
  max: number;
  ticks: number[];
  format: (v: number) => string;
  label: string;
}

/** Round numbers from `min` to `max` (at least), about `count` of them; whole ones for counts. */
export function niceTicks(min: number, max: number, count = 5, whole = false): number[] {
  if (max <= min) max = min + 1;
  const raw = (max - min) / count;
  const p = 10 ** Math.floor(Math.log10(raw));
  const nice = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw)!;
  const step = whole ? Math.max(1, Math.round(nice)) : nice;
  const out: number[] = [];
  for (let v = Math.floor(min / step) * step; v <= max + step * 1e-9; v += step) {
    out.push(Math.round(v / step) * step);
  }
  if (out.at(-1)! < max) out.push(out.at(-1)! + step);
  return out;
}

/** Short numbers: `1,200`, `0.25`, `12k`. */
export function shortNumber(v: number): string {
  if (Math.abs(v) >= 10_000) return `${Math.round(v / 1000)}k`;
  if (Number.isInteger(v)) return v.toLocaleString("en-US");
  return String(Math.round(v * 100) / 100);
}

/** A numeric axis over `[min, max]`, widened to round ticks (whole numbers for counts). */
export function linearAxis(min: number, max: number, label: string, whole = false): Axis {
  const ticks = niceTicks(min, max, 5, whole);
  return { min: ticks[0], max: ticks.at(-1)!, ticks, format: shortNumber, label };
}

/** An axis of named places 0 … n−1 (groups, versions). */
export function categoryAxis(names: readonly string[], label: string): Axis {
  const short = (s: string) => s.length > 9 ? `${s.slice(0, 8)}…` : s;
  return {
    min: -0.5,
    max: Math.max(0.5, names.length - 0.5),
    ticks: names.map((_, i) => i),
    format: (i) => short(names[i] ?? ""),
    label,
  };
}

const SECOND = 1000, MINUTE = 60 * SECOND, HOUR = 60 * MINUTE, DAY = 24 * HOUR;
const TIME_STEPS = [1, 2, 5, 10, 15, 30].map((n) => n * SECOND)
  .concat([1, 2, 5, 10, 15, 30].map((n) => n * MINUTE), [1, 2, 3, 6, 12].map((n) => n * HOUR))
  .concat([1, 2, 7, 14, 30].map((n) => n * DAY));

/** A time axis in UTC, ticks on whole seconds, minutes, hours or days: clock times, dates beyond. */
export function timeAxis(from: number, to: number, label: string): Axis {
  const span = Math.max(to - from, 4 * SECOND);
  const step = TIME_STEPS.find((s) => s >= span / 5) ?? TIME_STEPS.at(-1)!;
  const min = Math.floor(from / step) * step, max = Math.ceil((from + span) / step) * step;
  const ticks: number[] = [];
  for (let t = min; t <= max; t += step) ticks.push(t);
  const iso = (v: number) => new Date(v).toISOString();
  const format = step >= DAY
    ? (v: number) => iso(v).slice(5, 10)
    : span > DAY
    ? (v: number) => iso(v).slice(5, 16).replace("T", " ")
    : step >= MINUTE
    ? (v: number) => iso(v).slice(11, 16)
    : (v: number) => iso(v).slice(11, 19);
  return { min, max, ticks, format, label };
}

/** Where `v` is drawn horizontally. */
export function px(x: Axis, v: number): number {
  const w = WIDTH - MARGIN.left - MARGIN.right;
  return round(MARGIN.left + ((v - x.min) / (x.max - x.min || 1)) * w);
}

/** Where `v` is drawn vertically. */
export function py(y: Axis, v: number): number {
  const h = HEIGHT - MARGIN.top - MARGIN.bottom;
  return round(MARGIN.top + h - ((v - y.min) / (y.max - y.min || 1)) * h);
}

/** The bottom of the plot area (bars stand on it). */
export const BASELINE = HEIGHT - MARGIN.bottom;

const round = (v: number) => Math.round(v * 100) / 100;

/** One chart: title, the frame with both axes, and its marks. */
export const Chart: FC<
  { name: string; title: string; x: Axis; y: Axis; note?: Child; children?: Child }
> = ({ name, title, x, y, note, children }) => (
  <figure class="chart">
    <figcaption>{title}</figcaption>
    <svg
      class="plot"
      data-plot={name}
      viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
      width={WIDTH}
      height={HEIGHT}
      role="img"
      aria-label={title}
    >
      {y.ticks.map((t) => (
        <g class="tick">
          <line
            class="grid"
            x1={MARGIN.left}
            x2={WIDTH - MARGIN.right}
            y1={py(y, t)}
            y2={py(y, t)}
          />
          <text x={MARGIN.left - 6} y={py(y, t) + 4} text-anchor="end">{y.format(t)}</text>
        </g>
      ))}
      {x.ticks.map((t) => (
        <text class="tick" x={px(x, t)} y={BASELINE + 15} text-anchor="middle">{x.format(t)}</text>
      ))}
      <line class="axis" x1={MARGIN.left} x2={WIDTH - MARGIN.right} y1={BASELINE} y2={BASELINE} />
      <line class="axis" x1={MARGIN.left} x2={MARGIN.left} y1={MARGIN.top} y2={BASELINE} />
      <text
        class="label"
        x={(MARGIN.left + WIDTH - MARGIN.right) / 2}
        y={HEIGHT - 4}
        text-anchor="middle"
      >
        {x.label}
      </text>
      <text class="label" x={MARGIN.left - 40} y={MARGIN.top - 10} text-anchor="start">
        {y.label}
      </text>
      {children}
    </svg>
    {note ? <p class="muted note">{note}</p> : null}
  </figure>
);

/** A histogram's bars, each with the span and count it stands for. */
export const Bars: FC<{ x: Axis; y: Axis; bins: { from: number; to: number; n: number }[] }> = (
  { x, y, bins },
) => (
  <g>
    {bins.map((b) => (
      <rect
        class="bar"
        data-from={b.from}
        data-to={b.to}
        data-n={b.n}
        x={px(x, b.from) + 0.5}
        width={Math.max(0.5, px(x, b.to) - px(x, b.from) - 1)}
        y={py(y, b.n)}
        height={round(BASELINE - py(y, b.n))}
      >
        <title>{`${x.format(b.from)}–${x.format(b.to)}: ${b.n}`}</title>
      </rect>
    ))}
  </g>
);
