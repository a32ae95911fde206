import assert from "node:assert/strict";
import { reasoningOf, thoughtSignature } from "./thought_signature.ts";

Deno.test("thought signatures: valid base64 carrying any reasoning, others read as none", () => {
  for (const reasoning of ["", "plain", "line 1\nline 2\n", "é ✓ 😀 \u0000", "x".repeat(100_000)]) {
    const signature = thoughtSignature("r_1.0.ab", reasoning);
    assert.match(signature, /^[A-Za-z0-9+/]+=*$/);
    assert.equal(reasoningOf(signature), reasoning);
    assert.ok(atob(signature).startsWith("rollgate:r_1.0.ab\n"));
  }
  for (
    const other of [
      "",
      "skip_thought_signature_validator",
      "fakesig_00",
      btoa("rollgate:no newline"),
      btoa("somebody else's\nstate"),
      `${btoa("rollgate:t\nhidden")}!`,
    ]
  ) {
    assert.equal(reasoningOf(other), undefined, other);
  }
});
