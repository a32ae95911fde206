/**
 * Request bodies of the trainer API (`/api`). Every body is a closed object: a field it does not
 * name (`{"idd": …}`, `samplng`) is a 400 that names it and the known ones, never a setting
 * silently left at its default.
 *
 * @module
 */
import { z } from "zod";
import { LABEL_ACTIONS, POLICY_LABELS } from "../../trajectory/mod.ts";
import { describeIssues } from "../http/mod.ts";
import { TemperatureSchema, TopPSchema } from "../sampling_schema.ts";

/** An object schema that refuses unknown fields, naming them and the fields it knows. */
function closedObject<T extends z.ZodRawShape>(shape: T) {
  const known = Object.keys(shape).join(", ");
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.join(", ")} ` +
          `(known: ${known})`
        : undefined,
  });
}

export const SamplingSchema = closedObject({
  max_tokens: z.number().int().positive().optional(),
  temperature: TemperatureSchema.optional(),
  top_p: TopPSchema.optional(),
  top_k: z.number().int().positive().optional(),
});

export const CreateRolloutSchema = closedObject({
  id: z.string().regex(
    /^[A-Za-z0-9_.:-]{1,128}$/,
    "id may hold letters, digits and _ . : - (1-128)",
  )
    // A URL path segment `.` or `..` is resolved away: such a rollout could not be reached.
    .refine((id) => id !== "." && id !== "..", "id may not be . or .. (not a URL path segment)")
    .optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  sampling: SamplingSchema.optional(),
  /** Per-label action for this rollout's samples, e.g. `{ "side": "mask" }`. */
  labels: z.partialRecord(z.enum(POLICY_LABELS), z.enum(LABEL_ACTIONS)).optional(),
  reward_mode: z.enum(["full", "split"]).optional(),
  sft: closedObject({ weight: z.number().min(0), tools: z.array(z.string()).optional() })
    .optional(),
  /** A backend name the gateway was started with (`gate`, `vllm`, …). */
  backend: z.string().min(1).optional(),
  /** Special-token text in content is tokenized as plain text (default: the gateway's flag). */
  split_special_tokens: z.boolean().optional(),
  /** GRPO-style group (e.g. the task's id): advantages are relative within a group. */
  group: z.string().min(1).max(256).optional(),
  /** Turns more than this many weight versions older than at finish are not trained. */
  max_staleness: z.number().int().nonnegative().optional(),
  /**
   * Template variables for this rollout's renders (`{"enable_thinking": false}`,
   * `{"reasoning_effort": "high"}`), over the gateway's `--template-kwargs`; checked against what
   * the family reads when the rollout is created (values by the family's list, any JSON for the
   * generic family).
   */
  template: z.record(z.string(), z.unknown()).optional(),
  /**
   * The teacher that scores its turns (on-policy distillation): a name the gateway knows, a
   * vLLM-compatible server (`{url, model?, name?}`), or `null` for none; default: the gateway's.
   */
  teacher: z.union([
    z.string().min(1),
    closedObject({
      url: z.url({ protocol: /^https?$/ }),
      model: z.string().min(1).optional(),
      name: z.string().min(1).max(128).optional(),
    }),
    z.null(),
  ]).optional(),
});

const VersionSchema = z.union([z.string(), z.number()]);

/**
 * An array of numbers, each checked by `ok`, in one loop: zod's own array parses each element
 * as a value of its own (~0.1 µs and garbage per element: 40 µs for a 250-id completion, 11 ms
 * for a teacher's logprobs over a 128k prompt; `bench/trainer_schema_bench.ts`). Issues carry
 * the path to the first bad element, as zod's would.
 */
function numberArray(expected: string, ok: (x: number) => boolean, min?: [number, string]) {
  return z.custom<number[]>().superRefine((v, ctx) => {
    if (!Array.isArray(v)) {
      return ctx.addIssue({ code: "custom", message: "Invalid input: expected array" });
    }
    if (min && v.length < min[0]) return ctx.addIssue({ code: "custom", message: min[1] });
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (typeof x !== "number" || !ok(x)) {
        return ctx.addIssue({
          code: "custom",
          path: [i],
          message: `Invalid input: expected ${expected}`,
        });
      }
    }
  });
}

const isId = (x: number) => Number.isInteger(x) && x >= 0;
/** Token ids: non-negative integers. */
const tokenIds = (min?: [number, string]) => numberArray("a non-negative integer id", isId, min);
/** Log probabilities: finite, at most 0. */
const logprobList = () =>
  numberArray(
    "a log probability (a number, at most 0)",
    (x) => Number.isFinite(x) && x <= 0,
  );

/** Token rows on the wire; their shape and length are checked against the request (the gate). */
const TokenRowsSchema = closedObject({
  dtype: z.string(),
  shape: z.array(z.number()),
  data: z.string(),
});

export const CompleteSchema = closedObject({
  // Never empty: an output that stopped at once holds its end id (nothing else would be trained
  // or answered, and the agent would get an empty turn).
  output_ids: tokenIds([
    1,
    "must hold at least one id (an output that stopped at once holds its end-of-turn id)",
  ]),
  logprobs: logprobList().optional(),
  finish_reason: z.enum(["stop", "length"]),
  weight_version: VersionSchema.optional(),
  /** Whether `logprobs` are the raw model's or after temperature/top-p (the engine's setting). */
  logprobs_mode: z.enum(["raw", "processed"]).optional(),
  /** MoE routing of positions `routed_experts_from … len(prompt_ids) + len(output_ids) − 2`. */
  routed_experts: TokenRowsSchema.optional(),
  /** Each output id's kept set (vLLM's `sampling_mask`): the ids it was drawn from. */
  sampling_mask: z.array(tokenIds()).optional(),
}).refine((b) => !b.logprobs || b.logprobs.length === b.output_ids.length, {
  message: "logprobs must have one entry per output id",
  path: ["logprobs"],
});

/** Sampled ids streamed before the completion (`POST /api/requests/:id/append`). */
export const AppendSchema = closedObject({
  output_ids: tokenIds([1, "must hold at least one id"]),
  /** The weight version that sampled this chunk (a weight update may fall inside a turn). */
  weight_version: VersionSchema.optional(),
});

/**
 * `POST /api/requests/:id/ack` (and `/renew`): the lease wanted, in seconds, and the weight
 * version the trainer generates the request under (the first ack's is kept).
 */
export const AckSchema = closedObject({
  lease: z.number().positive().optional(),
  weight_version: VersionSchema.optional(),
});

/** `POST /api/resume`: the weight version in force from now on, when the trainer names it. */
export const ResumeSchema = closedObject({ weight_version: VersionSchema.optional() });

/** Most items one batch call takes (`/requests/ack`, `/append`, `/complete`). */
const MAX_BATCH = 256;
/** One item of a batch: its request, and the fields of the single call (checked on their own). */
const RequestItem = z.looseObject({ request_id: z.string().min(1) });

/** `POST /api/requests/ack`: several requests acknowledged at once, with one lease. */
export const AckManySchema = closedObject({
  request_ids: z.array(z.string().min(1)).min(1).max(MAX_BATCH),
  lease: z.number().positive().optional(),
});

/** `POST /api/requests/append`: `{appends: [{request_id, output_ids, weight_version?}]}`. */
export const AppendManySchema = closedObject({
  appends: z.array(RequestItem).min(1).max(MAX_BATCH),
});

/** `POST /api/requests/complete`: `{completions: [{request_id, ...a completion}]}`. */
export const CompleteManySchema = closedObject({
  completions: z.array(RequestItem).min(1).max(MAX_BATCH),
});

export const FailSchema = closedObject({
  error: z.string().min(1),
  status: z.number().int().min(400).max(599).optional(),
});

export const FinishSchema = closedObject({
  reward: z.number().nullable().optional(),
  /** The trainer's weight version now: what `max_staleness` is measured against. */
  weight_version: VersionSchema.optional(),
});

/** `POST /api/teacher/requests/:id/complete`: one logprob per position asked for. */
export const TeacherCompleteSchema = closedObject({ logprobs: logprobList() });

/** `POST /api/teacher/requests/:id/fail`. */
export const TeacherFailSchema = closedObject({ error: z.string().min(1) });

/** `POST /api/rollouts/:id/turns/:turn/reward`. */
export const TurnRewardSchema = closedObject({ reward: z.number() });

/** `parse` that turns zod issues into one readable line. */
export function parseOrThrow<T>(schema: z.ZodType<T>, body: unknown, what: string): T {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  throw new Error(`invalid ${what}: ${describeIssues(r.error.issues)}`);
}
