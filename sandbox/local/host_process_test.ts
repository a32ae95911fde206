import assert from "node:assert/strict";
import { PIPE_HELD_MARKER, startHostProcess } from "./host_process.ts";

const ENV = { PATH: "/usr/bin:/bin" };

Deno.test("host process: an orphan holding the output pipe does not hold up the result", async () => {
  // The shell exits at once; its background child keeps stdout open for 60 s.
  const p = startHostProcess(["sh", "-c", "echo hi; sleep 60 & exit 3"], ENV, {});
  const t0 = performance.now();
  const r = await p.done;
  const waited = performance.now() - t0;
  assert.equal(r.exitCode, 3);
  assert.equal(r.stdout, "hi\n" + PIPE_HELD_MARKER);
  assert.ok(waited < 30_000, `waited ${waited} ms for a pipe held by an orphan`);
  Deno.kill(-p.pid, "SIGKILL"); // the orphan is still in the process's group
});

Deno.test("host process: output that ends with the process is read whole, no marker", async () => {
  const p = startHostProcess(["sh", "-c", "printf 'a%.0s' $(seq 1 5000); echo err >&2"], ENV, {});
  const r = await p.done;
  assert.equal(r.stdout, "a".repeat(5000));
  assert.equal(r.stderr, "err\n");
});
