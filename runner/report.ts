/**
 * What a run tells its operator: a progress bar on stderr while rollouts run (done/total,
 * running, mean reward; one line per finished rollout) and a summary table at the end (per task:
 * samples, mean reward, pass@k = at least one sample earned reward 1).
 *
 * @module
 */
import type { RolloutRecord } from "./results_file.ts";

const BAR_WIDTH = 24;

/** Live progress of a run. */
export class Progress {
  #done = 0;
  #running = 0;
  #rewardSum = 0;
  #graded = 0;
  #failed = 0;

  constructor(
    readonly total: number,
    readonly write: (text: string) => void,
    readonly tty: boolean,
  ) {}

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
      this.#line(`${record.task}#${record.sample} ${record.rollout_id}: ${what} [${secs} s]`);
    }
    this.#draw();
  }

  /** The bar as text. */
  bar(): string {
    const filled = this.total ? Math.round((this.#done / this.total) * BAR_WIDTH) : BAR_WIDTH;
    const mean = this.#graded ? (this.#rewardSum / this.#graded).toFixed(2) : "-";
    const failed = this.#failed ? `, ${this.#failed} failed` : "";
    return `[${"#".repeat(filled)}${".".repeat(BAR_WIDTH - filled)}] ${this.#done}/${this.total}` +
      ` done, ${this.#running} running, mean reward ${mean}${failed}`;
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
  /** 1 when at least one sample earned reward 1. */
  passAtK: number | null;
}

/** Per-task summary of `records` for `tasks` (in that order), plus the whole run. */
export function summarize(
  tasks: string[],
  records: Iterable<RolloutRecord>,
): { rows: TaskSummary[]; total: TaskSummary } {
  const byTask = new Map<string, RolloutRecord[]>(tasks.map((t) => [t, []]));
  for (const r of records) byTask.get(r.task)?.push(r);
  const rows = tasks.map((task) => {
    const all = byTask.get(task)!;
    const graded = all.filter((r) => !r.error);
    const mean = graded.length ? graded.reduce((s, r) => s + r.reward, 0) / graded.length : null;
    return {
      task,
      samples: all.length,
      errors: all.length - graded.length,
      meanReward: mean,
      passAtK: graded.length ? (graded.some((r) => r.reward >= 1) ? 1 : 0) : null,
    };
  });
  const graded = rows.filter((r) => r.meanReward !== null);
  const samples = rows.reduce((s, r) => s + r.samples, 0);
  const errors = rows.reduce((s, r) => s + r.errors, 0);
  const rewardSum = [...byTask.values()].flat().filter((r) => !r.error)
    .reduce((s, r) => s + r.reward, 0);
  return {
    rows,
    total: {
      task: "all",
      samples,
      errors,
      meanReward: samples - errors ? rewardSum / (samples - errors) : null,
      passAtK: graded.length ? graded.reduce((s, r) => s + r.passAtK!, 0) / graded.length : null,
    },
  };
}

/** The summary as a plain-text table. */
export function formatSummary(s: { rows: TaskSummary[]; total: TaskSummary }, k: number): string {
  const num = (v: number | null) => v === null ? "-" : v.toFixed(2);
  const header = ["task", "samples", "errors", "mean reward", `pass@${k}`];
  const body = [...s.rows, s.total].map((r) => [
    r.task,
    String(r.samples),
    String(r.errors),
    num(r.meanReward),
    num(r.passAtK),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const fmt = (row: string[]) =>
    row.map((c, i) => i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i])).join("  ");
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  const lines = [fmt(header), rule, ...body.slice(0, -1).map(fmt), rule, fmt(body.at(-1)!)];
  return lines.join("\n") + "\n";
}
