/**
 * What checking a trainer's body costs beside reading it: `CompleteSchema` on a completion of 250
 * and 8,000 ids with their logprobs, and `TeacherCompleteSchema` on a teacher's logprobs over a
 * 128k prompt; the baseline of each group is `JSON.parse` of the same body (what any reader of
 * it spends).
 *
 *     deno bench -A bench/trainer_schema_bench.ts
 *
 * @module
 */
import { CompleteSchema, TeacherCompleteSchema } from "../gateway/trainer/mod.ts";

const completion = (n: number) => ({
  output_ids: Array.from({ length: n }, (_, i) => 1000 + ((i * 7919) % 150_000)),
  logprobs: Array.from({ length: n }, (_, i) => -((i % 17) + 1) / 8),
  finish_reason: "stop",
});
const cases: [string, { safeParse(v: unknown): { success: boolean } }, unknown][] = [
  ["completion, 250 ids", CompleteSchema, completion(250)],
  ["completion, 8,000 ids", CompleteSchema, completion(8_000)],
  ["teacher logprobs, 131,072 positions", TeacherCompleteSchema, {
    logprobs: Array.from({ length: 131_072 }, (_, i) => -((i % 17) + 1) / 8),
  }],
];
for (const [group, schema, body] of cases) {
  const text = JSON.stringify(body);
  Deno.bench({ name: `${group}: JSON.parse`, group, baseline: true }, () => {
    JSON.parse(text);
  });
  Deno.bench({ name: `${group}: schema check`, group }, () => {
    if (!schema.safeParse(body).success) throw new Error("the body should pass");
  });
}
