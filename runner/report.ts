/**
 * What a run tells its operator: a progress bar on stderr while rollouts run (done/total,
 * running, mean reward, elapsed time, rate and ETA; one line per finished rollout) and a summary
 * table at the end (per task: samples, errors, mean reward, pass@k for k up to the samples).
 *
 * @module
 */
import { passAtK, reportedKs } from "./pass_at_k.ts";
import type { RolloutRecord } from "./results_file.ts";

const BAR_WIDTH = 24;

/** A span of time as `42s`, `3m05s`, `2h07m`. */
export function clockText(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const pad = (n: number) => String(n).padStart(2, "0");
  if (s < 3600) return `${Math.floor(s / 60)}m${pad(s % 60)}s`;
  return `${Math.floor(s / 3600)}h${pad(Math.floor((s % 3600) / 60))}m`;
}

/** Live progress of a run. */
export class Progress {
  #done = 0;
  #running = 0;
  #rewardSum = 0;
  #graded = 0;
  #failed = 0;
  readonly #start: number;

  constructor(
    readonly total: number,
    readonly write: (text: string) => void,
    readonly tty: boolean,
    /** Milliseconds from a fixed origin (tests pass their own clock). */
    readonly now: () => number = () => performance.now(),
  ) {
    this.#start = now();
  }

  /** A rollout started. */
  started(): void {
    this.#running++;
    this.#draw();
  }

  /** A rollout ended (`undefined`: interrupted, nothing recorded). */
  finished(record: RolloutRecord | undefined): void {
    this.#running--;
    if (record) {
      this.#done++;
      if (record.error) this.#failed++;
      else {
        this.#graded++;
        this.#rewardSum += record.reward;
      }
      const secs = (record.timings.total_ms / 1000).toFixed(1);
      const what = record.error
        ? `error: ${record.error}`
        : `reward ${record.reward}${
          record.agent?.ok === false ? ` (agent: ${record.agent.error})` : ""
        }`;
      this.#line(
        `${record.task}#${record.sample} ${record.rollout_id}: ${what} [${secs} s] ` +
          `(${this.#done}/${this.total}, ${this.timing()})`,
      );
    }
    this.#draw();
  }

  /**
   * Elapsed time, the rate of finished rollouts and the time left at that rate (once one
   * finished): `3m05s elapsed, 4.2/min, ETA 1h10m`.
   */
  timing(): string {
    const elapsed = this.now() - this.#start;
    const parts = [`${clockText(elapsed)} elapsed`];
    if (this.#done > 0 && elapsed > 0) {
      const perMin = this.#done / (elapsed / 60_000);
      parts.push(`${perMin >= 10 ? perMin.toFixed(0) : perMin.toFixed(1)}/min`);
      const left = this.total - this.#done;
      parts.push(left > 0 ? `ETA ${clockText((left / this.#done) * elapsed)}` : "all done");
    }
    return parts.join(", ");
  }

  /** The bar as text. */
  bar(): string {
    const filled = this.total ? Math.round((this.#done / this.total) * BAR_WIDTH) : BAR_WIDTH;
    const mean = this.#graded ? (this.#rewardSum / this.#graded).toFixed(2) : "-";
    const failed = this.#failed ? `, ${this.#failed} failed` : "";
    return `[${"#".repeat(filled)}${".".repeat(BAR_WIDTH - filled)}] ${this.#done}/${this.total}` +
      ` done, ${this.#running} running, mean reward ${mean}${failed}; ${this.timing()}`;
  }

  #line(text: string): void {
    this.write(this.tty ? `\r\x1b[2K${text}\n` : `${text}\n`);
  }

  #draw(): void {
    if (this.tty) this.write(`\r\x1b[2K${this.bar()}`);
  }

  /** Ends the bar (a final newline on a terminal, the final state otherwise). */
  end(): void {
    this.write(this.tty ? `\r\x1b[2K${this.bar()}\n` : `${this.bar()}\n`);
  }
}

/** One row of the summary. */
export interface TaskSummary {
  task: string;
  samples: number;
  /** Rollouts that could not run (excluded from the reward columns). */
  errors: number;
  meanReward: number | null;
  /**
   * pass@k per reported k (`reportedKs`): over the graded samples, a pass being reward ≥ 1; null
   * where fewer than k were graded. The total row averages the tasks that have a value.
   */
  passAt: Record<number, number | null>;
}

/** A whole run's summary: a row per task and the total. */
export interface RunSummary {
  /** The k of the pass@k columns. */
  ks: number[];
  rows: TaskSummary[];
  total: TaskSummary;
}

const mean = (xs: number[]) => xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;

/**
 * Per-task summary of `records` for `tasks` (in that order), plus the whole run; pass@k for k up
 * to `samples` (the run's samples per task).
 */
export function summarize(
  tasks: string[],
  records: Iterable<RolloutRecord>,
  samples: number,
): RunSummary {
  const ks = reportedKs(samples);
  const byTask = new Map<string, RolloutRecord[]>(tasks.map((t) => [t, []]));
  for (const r of records) byTask.get(r.task)?.push(r);
  const rows = tasks.map((task): TaskSummary => {
    const all = byTask.get(task)!;
    const rewards = all.filter((r) => !r.error).map((r) => r.reward);
    const passed = rewards.filter((r) => r >= 1).length;
    return {
      task,
      samples: all.length,
      errors: all.length - rewards.length,
      meanReward: mean(rewards),
      passAt: Object.fromEntries(ks.map((k) => [k, passAtK(rewards.length, passed, k)])),
    };
  });
  const graded = [...byTask.values()].flat().filter((r) => !r.error).map((r) => r.reward);
  const samplesTotal = rows.reduce((s, r) => s + r.samples, 0);
  return {
    ks,
    rows,
    total: {
      task: "all",
      samples: samplesTotal,
      errors: samplesTotal - graded.length,
      meanReward: mean(graded),
      passAt: Object.fromEntries(
        ks.map((k) => [k, mean(rows.flatMap((r) => r.passAt[k] ?? []))]),
      ),
    },
  };
}

/** The summary as a plain-text table. */
export function formatSummary(s: RunSummary): string {
  const num = (v: number | null) => v === null ? "-" : v.toFixed(2);
  const header = ["task", "samples", "errors", "mean reward", ...s.ks.map((k) => `pass@${k}`)];
  const body = [...s.rows, s.total].map((r) => [
    r.task,
    String(r.samples),
    String(r.errors),
    num(r.meanReward),
    ...s.ks.map((k) => num(r.passAt[k])),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const fmt = (row: string[]) =>
    row.map((c, i) => i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i])).join("  ");
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  const lines = [fmt(header), rule, ...body.slice(0, -1).map(fmt), rule, fmt(body.at(-1)!)];
  return lines.join("\n") + "\n";
}
