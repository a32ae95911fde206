/** The trainer API's id and logprob arrays: checked in one loop, issues at the element's path. */
import assert from "node:assert/strict";
import {
  AppendSchema,
  CompleteSchema,
  parseOrThrow,
  TeacherCompleteSchema,
} from "./trainer_schema.ts";

const fails = (schema: Parameters<typeof parseOrThrow>[0], body: unknown, re: RegExp) =>
  assert.throws(() => parseOrThrow(schema, body, "body"), re);

Deno.test("trainer schema: token ids and logprobs pass as sent, bad elements are named by position", () => {
  const ok = parseOrThrow(CompleteSchema, {
    output_ids: [9707, 0, 151645],
    logprobs: [-0.5, 0, -12.25],
    finish_reason: "stop",
    sampling_mask: [[9707, 11], [0], [151645]],
  }, "completion");
  assert.deepEqual(ok.output_ids, [9707, 0, 151645]);
  assert.deepEqual(ok.logprobs, [-0.5, 0, -12.25]);
  assert.deepEqual(ok.sampling_mask, [[9707, 11], [0], [151645]]);

  const complete = (over: Record<string, unknown>) => ({
    output_ids: [1, 2],
    finish_reason: "stop",
    ...over,
  });
  fails(CompleteSchema, { finish_reason: "stop" }, /^Error: invalid body: output_ids: .*array/);
  fails(CompleteSchema, complete({ output_ids: [] }), /output_ids: must hold at least one id/);
  fails(CompleteSchema, complete({ output_ids: "1,2" }), /output_ids: .*expected array/);
  for (const bad of [-1, 1.5, "3", null]) {
    fails(CompleteSchema, complete({ output_ids: [1, bad] }), /output_ids\[1\]: .*integer id/);
  }
  fails(CompleteSchema, complete({ logprobs: [-1, 0.25] }), /logprobs\[1\]: .*at most 0/);
  fails(CompleteSchema, complete({ logprobs: [-1, "x"] }), /logprobs\[1\]: /);
  fails(CompleteSchema, complete({ logprobs: [-1] }), /one entry per output id/);
  fails(CompleteSchema, complete({ sampling_mask: [[1], [2, -3]] }), /sampling_mask\[1\]\[1\]: /);
  fails(AppendSchema, { output_ids: [] }, /output_ids: must hold at least one id/);
  fails(AppendSchema, { output_ids: [7, 8.5] }, /output_ids\[1\]: /);

  // A teacher's logprobs over a whole 128k prompt: one number per position, all checked.
  const long = Array.from({ length: 131_072 }, (_, i) => -(i % 13) / 4);
  assert.equal(
    parseOrThrow(TeacherCompleteSchema, { logprobs: long }, "t").logprobs.length,
    131_072,
  );
  long[100_000] = 1;
  fails(TeacherCompleteSchema, { logprobs: long }, /logprobs\[100000\]: .*at most 0/);
});
