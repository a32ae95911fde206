/**
 * Counters, gauges and histograms rendered in the Prometheus text exposition format (0.0.4).
 * Small on purpose: label sets are kept in a map per metric, and nothing is computed until a
 * scrape renders them.
 *
 * @module
 */

export type Labels = Readonly<Record<string, string>>;

/** `# TYPE` of a metric family. */
type Kind = "counter" | "gauge" | "histogram";

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function labelText(labels: Labels, extra?: [string, string]): string {
  const pairs = Object.entries(labels);
  if (extra) pairs.push(extra);
  if (pairs.length === 0) return "";
  return `{${pairs.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(",")}}`;
}

function numberText(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Infinity) return "+Inf";
  if (n === -Infinity) return "-Inf";
  return String(n);
}

/** A stable key for a label set (label order as given by the caller). */
function keyOf(labels: Labels): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => a < b ? -1 : 1));
}

abstract class Family {
  constructor(readonly name: string, readonly help: string, readonly kind: Kind) {}
  abstract samples(): string[];
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.kind}`];
    return [...lines, ...this.samples()].join("\n");
  }
}

/** A value that only goes up (per label set). */
export class Counter extends Family {
  readonly #values = new Map<string, { labels: Labels; value: number }>();
  constructor(name: string, help: string) {
    super(name, help, "counter");
  }
  inc(labels: Labels = {}, by = 1): void {
    const k = keyOf(labels);
    const v = this.#values.get(k);
    if (v) v.value += by;
    else this.#values.set(k, { labels, value: by });
  }
  get(labels: Labels = {}): number {
    return this.#values.get(keyOf(labels))?.value ?? 0;
  }
  samples(): string[] {
    return [...this.#values.values()].map((v) =>
      `${this.name}${labelText(v.labels)} ${numberText(v.value)}`
    );
  }
}

/** A value read when scraped, from a function (queue lengths, memory, flags). */
export class Gauge extends Family {
  constructor(name: string, help: string, readonly read: () => Iterable<[Labels, number]>) {
    super(name, help, "gauge");
  }
  samples(): string[] {
    return [...this.read()].map(([labels, value]) =>
      `${this.name}${labelText(labels)} ${numberText(value)}`
    );
  }
}

/** Observations counted into cumulative buckets, with their sum and count. */
export class Histogram extends Family {
  readonly #series = new Map<
    string,
    { labels: Labels; counts: number[]; sum: number; count: number }
  >();
  /** @param buckets upper bounds, ascending; `+Inf` is implied */
  constructor(name: string, help: string, readonly buckets: readonly number[]) {
    super(name, help, "histogram");
  }
  observe(labels: Labels, value: number): void {
    const k = keyOf(labels);
    let s = this.#series.get(k);
    if (!s) {
      this.#series.set(k, s = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 });
    }
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]) s.counts[i]++;
    s.sum += value;
    s.count++;
  }
  samples(): string[] {
    const out: string[] = [];
    for (const s of this.#series.values()) {
      this.buckets.forEach((le, i) =>
        out.push(`${this.name}_bucket${labelText(s.labels, ["le", numberText(le)])} ${s.counts[i]}`)
      );
      out.push(`${this.name}_bucket${labelText(s.labels, ["le", "+Inf"])} ${s.count}`);
      out.push(`${this.name}_sum${labelText(s.labels)} ${numberText(s.sum)}`);
      out.push(`${this.name}_count${labelText(s.labels)} ${s.count}`);
    }
    return out;
  }
}

/**
 * The metric families of one process, rendered together.
 *
 * @example
 * ```ts
 * const registry = new MetricsRegistry();
 * const turns = registry.add(new Counter("rollgate_turns_total", "Turns recorded."));
 * turns.inc({ backend: "gate" });
 * registry.render(); // "# HELP rollgate_turns_total Turns recorded.\n# TYPE …"
 * ```
 */
export class MetricsRegistry {
  readonly #families: Family[] = [];
  add<F extends Family>(family: F): F {
    this.#families.push(family);
    return family;
  }
  /** The text format body (`text/plain; version=0.0.4`). */
  render(): string {
    return this.#families.map((f) => f.render()).join("\n") + "\n";
  }
}

/** The `Content-Type` of `MetricsRegistry.render()`. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
