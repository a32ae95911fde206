import assert from "node:assert/strict";
import { skippedLine } from "./report_skips.ts";

Deno.test("skippedLine: none, and groups gathered by reason", () => {
  assert.equal(skippedLine(""), "skipped: none");
  const log = [
    { group: "runner pi", reason: "pi not installed" },
    { group: "docker backend", reason: "no podman" },
    { group: "e2e pi", reason: "pi not installed" },
    { group: "runner pi", reason: "pi not installed" },
  ].map((s) => JSON.stringify(s)).join("\n");
  assert.equal(
    skippedLine(log),
    "skipped: docker backend (no podman); e2e pi, runner pi (pi not installed)",
  );
});
