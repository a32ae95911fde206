/**
 * The closing lines of `.ci/run`: every test suite the log of `npm test` holds, each on one line,
 * e.g. `4 suites: deno 893, deno 50, unittest 59, unittest 66; 7 skipped`, then their sum alone on
 * the last line, `1068 passed, 0 failed`, which is what CI reads (nothing may follow it there).
 * It reads each runner's own summary wherever it appears, so a suite added to `tests/run_all.sh`
 * (another Deno run, unittest or pytest in another venv) is counted without a change here:
 *
 * - Deno: `ok | 893 passed (71 steps) | 0 failed | 2 ignored (15m36s)` (or `FAILED | …`);
 * - unittest: `Ran 66 tests in 34.7s`, then `OK (skipped=7)` or `FAILED (failures=1, errors=2)`;
 * - pytest: `==== 12 passed, 1 failed, 2 skipped in 3.21s ====`.
 *
 * What a Deno test printed of a child process (between its `post-test output` markers) is not a
 * summary of this run and is left out.
 *
 * @module
 */

export interface SuiteCount {
  runner: "deno" | "unittest" | "pytest";
  passed: number;
  failed: number;
  skipped: number;
}

/** `key=N` pairs of a unittest outcome line, e.g. `FAILED (failures=1, skipped=2)`. */
function outcomeCounts(line: string): Record<string, number> {
  return Object.fromEntries([...line.matchAll(/(\w+)=(\d+)/g)].map((m) => [m[1], Number(m[2])]));
}

/** `N word` pairs of a pytest summary, e.g. `12 passed, 1 failed`. */
function pytestCounts(line: string): Record<string, number> {
  return Object.fromEntries([...line.matchAll(/(\d+) (\w+)/g)].map((m) => [m[2], Number(m[1])]));
}

/** Every suite summary in `log`, in order. */
export function suiteCounts(log: string): SuiteCount[] {
  const suites: SuiteCount[] = [];
  let captured = false;
  let ran: number | undefined;
  // deno-lint-ignore no-control-regex
  for (const line of log.replace(/\x1b\[[0-9;]*m/g, "").split(/\r?\n/)) {
    if (
      line.includes("------- post-test output -------") || line.includes("------- output -------")
    ) {
      captured = true;
    }
    if (line.includes("output end -----")) {
      captured = false;
      continue;
    }
    if (captured) continue;
    const deno = /^(ok|FAILED) \| (\d+) passed.*?\| (\d+) failed(?: \| (\d+) ignored)?/.exec(line);
    if (deno) {
      suites.push({
        runner: "deno",
        passed: Number(deno[2]),
        failed: Number(deno[3]),
        skipped: Number(deno[4] ?? 0),
      });
      continue;
    }
    const started = /^Ran (\d+) tests? in /.exec(line);
    if (started) {
      ran = Number(started[1]);
      continue;
    }
    if (ran !== undefined && /^(OK|FAILED)\b/.test(line)) {
      const n = outcomeCounts(line);
      const failed = (n.failures ?? 0) + (n.errors ?? 0) + (n.unexpected_successes ?? 0);
      const skipped = n.skipped ?? 0;
      suites.push({
        runner: "unittest",
        passed: ran - failed - skipped - (n.expected_failures ?? 0),
        failed,
        skipped,
      });
      ran = undefined;
      continue;
    }
    const pytest = /^=+ (.*\d+ (?:passed|failed|error|errors|skipped).*) in [\d.]+s.* =+$/.exec(
      line,
    );
    if (pytest) {
      const n = pytestCounts(pytest[1]);
      suites.push({
        runner: "pytest",
        passed: n.passed ?? 0,
        failed: (n.failed ?? 0) + (n.error ?? 0) + (n.errors ?? 0),
        skipped: (n.skipped ?? 0) + (n.xfailed ?? 0),
      });
    }
  }
  return suites;
}

/** What CI reads, alone on the last line: `1068 passed, 0 failed`. */
export function totalsLine(suites: readonly SuiteCount[]): string {
  return `${sum(suites, "passed")} passed, ${sum(suites, "failed")} failed`;
}

/** Each suite of `suites`, for the line before the totals. */
export function suitesLine(suites: readonly SuiteCount[]): string {
  const each = suites.map((s) => `${s.runner} ${s.passed}${s.failed ? `/${s.failed} failed` : ""}`);
  const skipped = sum(suites, "skipped");
  return `${suites.length} suite${suites.length === 1 ? "" : "s"}` +
    `${each.length ? `: ${each.join(", ")}` : ""}${skipped ? `; ${skipped} skipped` : ""}`;
}

function sum(suites: readonly SuiteCount[], k: "passed" | "failed" | "skipped"): number {
  return suites.reduce((n, s) => n + s[k], 0);
}

if (import.meta.main) {
  const log = await Deno.readTextFile(Deno.args[0]).catch(() => "");
  const suites = suiteCounts(log);
  console.log(suitesLine(suites));
  console.log(totalsLine(suites));
}
