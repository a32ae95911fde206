import assert from "node:assert/strict";
import { NativeMemoryTrim } from "./native_memory.ts";

Deno.test("NativeMemoryTrim: one trim per threshold of text, never two at once", async () => {
  let calls = 0;
  let release!: () => void;
  const trim = new NativeMemoryTrim(() => {
    calls++;
    return new Promise((resolve) => release = () => resolve(1));
  }, 100);
  assert.equal(trim.afterEncoding(60), null);
  const first = trim.afterEncoding(60);
  assert.ok(first);
  assert.equal(calls, 1);
  // While it runs, crossing the mark again starts nothing.
  assert.equal(trim.afterEncoding(500), null);
  release();
  await first;
  assert.ok(trim.afterEncoding(500));
  release();
  assert.equal(calls, 2);
  assert.equal(trim.trims, 2);
});

Deno.test("NativeMemoryTrim: the process's glibc malloc_trim loads and runs", async () => {
  const shared = NativeMemoryTrim.shared();
  if (Deno.build.os !== "linux") return;
  assert.ok(shared.available, "glibc and the FFI permission (-A) are there: trimming must load");
  const probe = new NativeMemoryTrim(null, 1);
  assert.equal(probe.afterEncoding(10), null, "without malloc_trim nothing runs");
  const before = shared.trims;
  // Nothing in this file encodes, so no trim is running: this one starts.
  const trimmed = shared.afterEncoding(shared.everyChars);
  assert.ok(trimmed);
  await trimmed;
  assert.equal(shared.trims, before + 1);
});
