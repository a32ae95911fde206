/**
 * The results file: JSON Lines, one {@link RolloutRecord} per finished rollout, appended as
 * rollouts finish. Reading it back is how a run resumes: a `(task, sample)` pair that already has
 * a record without `error` is not run again.
 *
 * @module
 */
import type { AgentOutcome } from "./sandbox_agent.ts";

/** One test of the grading run. */
export interface TestRecord {
  id: string;
  kind: "FAIL_TO_PASS" | "PASS_TO_PASS";
  passed: boolean;
  exit_code: number;
  timed_out: boolean;
  duration_ms: number;
  /** The end of the test's output. */
  output: string;
}

/** One rollout, as written to the results file. */
export interface RolloutRecord {
  rollout_id: string;
  /** The task's `instance_id`. */
  task: string;
  /** Sample index, 0 … K-1. */
  sample: number;
  harness: string;
  /** 1 iff the diff applied and every FAIL_TO_PASS and PASS_TO_PASS test passed. */
  reward: number;
  tests: TestRecord[];
  /** The agent's changes against the base commit (what was graded). */
  diff: string;
  agent: AgentOutcome | null;
  timings: {
    started_at: string;
    agent_ms: number | null;
    eval_ms: number | null;
    total_ms: number;
  };
  /** The rollout's training samples, as `POST /api/rollouts/:id/finish` returned them. */
  samples: unknown[];
  /** Who generated: `gate` (an external trainer), `gold`, `noop`, `vllm`, `anthropic`, `openai`. */
  policy: string;
  /** Where completions came from (`gate`, `vllm`, `anthropic`, `openai`); absent in older files. */
  backend?: string;
  sandbox: string;
  /** Turns the gateway recorded for the rollout. */
  turns: number;
  /** Grading details: whether the patches applied, why grading stopped early. */
  eval: { patch_applied: boolean; test_patch_applied: boolean; error: string | null } | null;
  /** The scripted policy's first failure (its request got a gateway error), if any. */
  policy_error?: string;
  /**
   * Set when the rollout could not run (sandbox or setup failure): it was deleted from the
   * gateway, its reward is meaningless, and a resumed run tries it again.
   */
  error?: string;
}

/** The key of a `(task, sample)` pair. */
export function recordKey(task: string, sample: number): string {
  return `${task}\u0000${sample}`;
}

/**
 * The records already in `path` (none when it does not exist), latest per `(task, sample)`.
 * Lines that are not records (e.g. a line cut short by a crash) are skipped.
 */
export async function readRecords(path: string): Promise<Map<string, RolloutRecord>> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return new Map();
    throw err;
  }
  const records = new Map<string, RolloutRecord>();
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let rec: RolloutRecord;
    try {
      rec = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof rec?.task !== "string" || typeof rec.sample !== "number") continue;
    const key = recordKey(rec.task, rec.sample);
    // A good record is never replaced by a later failed attempt.
    if (rec.error && records.has(key) && !records.get(key)!.error) continue;
    records.set(key, rec);
  }
  return records;
}

/** Appends records to the results file, one whole line at a time, in completion order. */
export class ResultsWriter {
  #file: Deno.FsFile;
  #queue: Promise<void> = Promise.resolve();

  private constructor(file: Deno.FsFile) {
    this.#file = file;
  }

  /** Opens `path` for appending (creating it and its directory); a cut-off last line is ended. */
  static async open(path: string): Promise<ResultsWriter> {
    const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "";
    if (dir) await Deno.mkdir(dir, { recursive: true });
    const file = await Deno.open(path, { read: true, append: true, create: true });
    const writer = new ResultsWriter(file);
    const size = (await file.stat()).size;
    if (size > 0) {
      const last = new Uint8Array(1);
      const reader = await Deno.open(path, { read: true });
      try {
        await reader.seek(size - 1, Deno.SeekMode.Start);
        await reader.read(last);
      } finally {
        reader.close();
      }
      if (last[0] !== 0x0a) await writer.#writeAll(new TextEncoder().encode("\n"));
    }
    return writer;
  }

  async #writeAll(bytes: Uint8Array): Promise<void> {
    let off = 0;
    while (off < bytes.length) off += await this.#file.write(bytes.subarray(off));
  }

  /** Appends one record as one line. */
  append(record: RolloutRecord): Promise<void> {
    const bytes = new TextEncoder().encode(JSON.stringify(record) + "\n");
    this.#queue = this.#queue.then(() => this.#writeAll(bytes));
    return this.#queue;
  }

  async close(): Promise<void> {
    await this.#queue.catch(() => {});
    this.#file.close();
  }
}
