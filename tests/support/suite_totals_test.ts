import assert from "node:assert/strict";
import { suiteCounts, suitesLine, totalsLine } from "./suite_totals.ts";

// The shape of a real `npm test` log (colours and all), shortened.
const LOG = [
  "== deno test",
  "\x1b[0m\x1b[38;5;245m./tests/e2e/x_test.ts => \x1b[0mretry ...\x1b[0m\x1b[38;5;245m------- post-test output -------\x1b[0m",
  "Ran 3 tests in 0.1s", // a child's unittest run, printed by a Deno test: not this run's
  "OK",
  "ok | 9 passed | 0 failed (1s)", // a child's deno run inside that output
  "\x1b[0m\x1b[38;5;245m----- post-test output end -----\x1b[0m",
  "\x1b[0m\x1b[32mok\x1b[0m | 893 passed (71 steps) | 0 failed \x1b[0m\x1b[38;5;245m(15m36s)\x1b[0m",
  "== doc examples of every mod.ts (deno test --doc)",
  "FAILED | 48 passed | 2 failed | 1 ignored (17s)",
  "== Python client",
  "...sss",
  "----------------------------------------------------------------------",
  "Ran 66 tests in 34.721s",
  "",
  "OK (skipped=7)",
  "Ran 66 tests in 48.949s",
  "",
  "FAILED (failures=1, errors=2, skipped=1)",
  "==================== 12 passed, 1 failed, 2 skipped, 3 warnings in 3.21s ====================",
  "skipped: none",
].join("\n");

Deno.test("suite totals: every runner's summary, child output left out", () => {
  assert.deepEqual(suiteCounts(LOG), [
    { runner: "deno", passed: 893, failed: 0, skipped: 0 },
    { runner: "deno", passed: 48, failed: 2, skipped: 1 },
    { runner: "unittest", passed: 59, failed: 0, skipped: 7 },
    { runner: "unittest", passed: 62, failed: 3, skipped: 1 },
    { runner: "pytest", passed: 12, failed: 1, skipped: 2 },
  ]);
  assert.equal(totalsLine(suiteCounts(LOG)), "1074 passed, 6 failed");
  assert.equal(
    suitesLine(suiteCounts(LOG)),
    "5 suites: deno 893, deno 48/2 failed, unittest 59, unittest 62/3 failed, " +
      "pytest 12/1 failed; 11 skipped",
  );
});

Deno.test("suite totals: a log with no summary says so, not a plausible count", () => {
  const none = suiteCounts("error: Module not found\n");
  assert.equal(totalsLine(none), "0 passed, 0 failed");
  assert.equal(suitesLine(none), "0 suites");
});
