/**
 * What the trainer API's sub-apps share, built once per API: its options, the JSON body reader
 * (size cap, schema, a 400 naming what was expected), the rollout named by `:id`, and the id
 * transport a request asks for.
 *
 * @module
 */
import type { Context } from "hono";
import type { z } from "zod";
import type { PauseGate, TeacherQueue } from "../../generation/mod.ts";
import type { PolicyModel } from "../../model/mod.ts";
import type { Rollout, RolloutActions, SampleOptions } from "../../trajectory/mod.ts";
import { GatewayError } from "../gateway_error.ts";
import { readJsonBody } from "../http/mod.ts";
import { type IdEncoding, requestedIdEncoding } from "./id_transport.ts";
import { parseOrThrow } from "./trainer_schema.ts";

export interface TrainerRouteOptions {
  /** Every change the trainer makes goes through it. */
  rollouts: RolloutActions;
  model: PolicyModel;
  maxBodyBytes: number;
  adminToken?: string;
  /** Base URL agents use to reach this gateway; default: from the request's Host header. */
  publicUrl?: string;
  /** Backend given to rollouts that name none (a black-box default); unset: the runner's. */
  defaultRolloutBackend?: string;
  /** Backend names a rollout may choose; unset: any name is accepted. */
  backends?: readonly string[];
  /** Pause/drain for weight syncs (`/pause`, `/resume`, `/status`); unset: those routes 404. */
  pause?: PauseGate;
  /** Gateway-wide sample options (label policy, reward mode, SFT); rollouts may override. */
  sampleOptions?: Partial<SampleOptions>;
  /** Default of `split_special_tokens` for new rollouts. */
  splitSpecialTokens?: boolean;
  /** The gateway is one of several replicas (their request queue is shared, `cluster/`). */
  replicated?: boolean;
  /** Scorings for the teachers that are the trainer (`/teacher/requests/…`); unset: those 404. */
  teacherQueue?: TeacherQueue;
}

export interface TrainerContext {
  readonly options: TrainerRouteOptions;
  /**
   * The request's JSON body checked by `schema`; an empty (or absent) body is `{}`. A 400 names
   * `what`, and a field the schema does not know.
   */
  body<T>(c: Context, schema: z.ZodType<T>, what: string): Promise<T>;
  /** `value` (one item of a batch body) checked by `schema`; a 400 names `what`. */
  checked<T>(schema: z.ZodType<T>, value: unknown, what: string): T;
  /** The rollout named by the `:id` path parameter (404 when unknown), marked as active. */
  rollout(c: Context): Rollout;
}

export function trainerContext(options: TrainerRouteOptions): TrainerContext {
  const checked = <T>(schema: z.ZodType<T>, value: unknown, what: string): T => {
    try {
      return parseOrThrow(schema, value, what);
    } catch (e) {
      throw new GatewayError(400, (e as Error).message);
    }
  };
  return {
    options,
    checked,
    async body(c, schema, what) {
      const raw = await readJsonBody(c.req.raw, options.maxBodyBytes, { empty: {} });
      return checked(schema, raw, what);
    },
    rollout(c) {
      const r = options.rollouts.require(c.req.param("id")!);
      r.touch();
      return r;
    },
  };
}

/** The id transport a trainer-API request asks for (`?ids=`, `Accept`); JSON by default. */
export function idEncoding(c: Context): IdEncoding {
  return requestedIdEncoding(c.req.query("ids"), c.req.header("accept"));
}
