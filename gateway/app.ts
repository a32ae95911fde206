/**
 * The whole gateway as one Hono app: agent endpoints, trainer API, the viewer (`/ui`), health,
 * readiness, metrics.
 *
 * @module
 */
import { Hono } from "hono";
import {
  type GateOptions,
  type GenerationBackend,
  InterceptionGate,
  PauseGate,
  type RequestQueue,
  type TeacherQueue,
  type Teachers,
} from "../generation/mod.ts";
import type { PolicyModel } from "../model/mod.ts";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  DEFAULT_TURN_LIMITS,
  type ImageStore,
  type Journal,
  type RestoreReport,
  RolloutActions,
  type SampleLog,
  type SampleOptions,
  type TeacherScoring,
  type TurnLimits,
} from "../trajectory/mod.ts";
import {
  agentRoutes,
  BUILTIN_HOST_TOOLS,
  DEFAULT_KNOWN_PREFIX_BYTES,
  DEFAULT_MAX_TOOL_BODY_BYTES,
  DEFAULT_MAX_TOOL_BYTES_PER_ROLLOUT,
  type HostTool,
  hostToolRoutes,
  KnownPrefixes,
  type Upstream,
} from "./agent/mod.ts";
import { trainerRoutes } from "./trainer/mod.ts";
import { DEFAULT_KEEPALIVE_MS, DEFAULT_MAX_BODY_BYTES, uiAuth } from "./http/mod.ts";
import { browserGuard } from "./security/mod.ts";
import {
  accessLog,
  GatewayMetrics,
  httpMetrics,
  operationsRoutes,
  Readiness,
} from "./operations/mod.ts";
import { liveSource, type RunResult, viewerRoutes } from "../viewer/mod.ts";
import { ImageDirectory } from "../journal/mod.ts";

/** Every bound the gateway puts on what clients send; each has a default. */
export interface GatewayLimits extends TurnLimits {
  /** An agent request body (a turn, `count_tokens`). */
  maxBodyBytes: number;
  /** A trainer API body (a completion, a rollout). */
  maxTrainerBodyBytes: number;
  /** One host-tool call's arguments. */
  maxToolBodyBytes: number;
  /** Host-tool arguments and results one rollout keeps. */
  maxToolBytesPerRollout: number;
  /**
   * What is kept of agent request bodies (element offsets and prefix digests, ~40 bytes a history
   * element), all rollouts together, to read each rollout's next request from where it departs
   * (`gateway/agent/known_prefix.ts`); past it requests are read whole.
   */
  knownPrefixBytes: number;
}

export const DEFAULT_LIMITS: Readonly<GatewayLimits> = {
  ...DEFAULT_TURN_LIMITS,
  maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
  maxTrainerBodyBytes: 16 * 1024 * 1024,
  maxToolBodyBytes: DEFAULT_MAX_TOOL_BODY_BYTES,
  maxToolBytesPerRollout: DEFAULT_MAX_TOOL_BYTES_PER_ROLLOUT,
  knownPrefixBytes: DEFAULT_KNOWN_PREFIX_BYTES,
};

/** Every wait's end; each has a default. */
export interface GatewayTimeouts {
  /** A turn's wait for its answer (`TurnRunnerOptions.turnTimeoutMs`). */
  turnMs?: number;
  /** How long an abandoned turn waits for a retry to re-attach. */
  abandonGraceMs?: number;
  /** A rollout without activity for this long is dropped from memory. */
  rolloutIdleMs?: number;
}

export interface GatewayOptions {
  model: PolicyModel;
  /** Default: the interception gate. */
  backend?: GenerationBackend;
  /**
   * Named backends a rollout can choose (`POST /api/rollouts {backend}`); the interception gate is
   * always there as `gate`.
   */
  backends?: Record<string, GenerationBackend>;
  /** Name (in `backends`, or `gate`) of the backend serving rollouts that name none. */
  defaultBackend?: string;
  adminToken?: string;
  limits?: Partial<GatewayLimits>;
  timeouts?: GatewayTimeouts;
  /** Acknowledgement timeout and leases of requests handed to trainers. */
  delivery?: GateOptions;
  /**
   * The pending requests trainers take, as the `gate` backend; default: this process's
   * interception gate (replicas share one in their database, `cluster/`).
   */
  requests?: RequestQueue;
  /** Where every change is journaled, to be restored after a restart; default: nowhere. */
  journal?: Journal;
  /**
   * Where the images turns show are kept, by content hash; default: the journal, else a
   * directory of its own under the system's temporary directory (made on the first image).
   */
  images?: ImageStore;
  /** Where finished samples are logged for `/api/samples/stream`; default: the journal, else the latest in memory. */
  sampleLog?: SampleLog;
  keepAliveMs?: number;
  /**
   * A streamed answer's head waits for its first event up to this long (default 0: at once);
   * replicas hold it (see `agentRoutes`).
   */
  streamHeadHoldMs?: number;
  publicUrl?: string;
  /** Model id reported by `/v1/models`. */
  modelName?: string;
  /** Black-box backends (hosted APIs) by name; a rollout names one as its `backend`. */
  upstreams?: Record<string, Upstream>;
  /** Host-side tools agents may call at `/rollout/:id/v1/tools/:name` (besides `submit`). */
  hostTools?: Record<string, HostTool>;
  /** Label policy, reward mode and SFT settings for samples; rollouts may override. */
  sampleOptions?: Partial<SampleOptions>;
  /** Rollouts tokenize special-token text in content as plain text unless they say otherwise. */
  splitSpecialTokens?: boolean;
  /**
   * The server listens on loopback only: a `Host` other than a loopback name (or the public URL's)
   * is refused, which defeats DNS rebinding from a web page.
   */
  loopbackOnly?: boolean;
  /** Where one access-log line per request goes; unset: no access log. */
  accessLog?: (line: string) => void;
  /** What `/metrics` reports; default: a fresh set. */
  metrics?: GatewayMetrics;
  /** What `/ready` checks; default: nothing (always ready). */
  readiness?: Readiness;
  /** The rollout runner's results so far, shown by the viewer beside their rollouts. */
  runResults?: () => readonly RunResult[];
  /** The teachers rollouts may name (on-policy distillation); default: none. */
  teachers?: Teachers;
  /** Where the scorings of the teachers that are the trainer wait (`/api/teacher/requests`). */
  teacherQueue?: TeacherQueue;
  /** Tries of a teacher scoring, their backoff, and how long finish waits for scorings. */
  teacherScoring?: TeacherScoring;
}

export interface Gateway {
  app: Hono;
  /** Every change to a rollout, and every read of them and of the trainer's queue, goes through it. */
  rollouts: RolloutActions;
  model: PolicyModel;
  limits: GatewayLimits;
  metrics: GatewayMetrics;
  /** The agent request bodies kept to read each rollout's next request from where it departs. */
  knownPrefixes: KnownPrefixes;
  /**
   * Rebuilds the journaled rollouts and re-queues their unanswered requests; call once, before
   * serving. `null` without a journal.
   */
  restore(): Promise<RestoreReport | null>;
}

/**
 * @example
 * ```ts
 * import { createGateway } from "./mod.ts";
 * import { PolicyModel } from "../model/mod.ts";
 *
 * const gw = createGateway({ model: await PolicyModel.load() });
 * Deno.serve({ port: 7860 }, gw.app.fetch);
 * ```
 */
export function createGateway(options: GatewayOptions): Gateway {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const timeouts = options.timeouts ?? {};
  const pause = new PauseGate();
  const gate = new InterceptionGate({ ...options.delivery, versionInForce: () => pause.version });
  const requests = options.requests ?? gate;
  const backends: Record<string, GenerationBackend> = { ...options.backends, gate: requests };
  const defaultName = options.defaultBackend ?? "gate";
  const upstreamDefault = options.upstreams?.[defaultName] ? defaultName : undefined;
  if (!backends[defaultName] && !upstreamDefault) {
    const known = [...Object.keys(backends), ...Object.keys(options.upstreams ?? {})].join(", ");
    throw new Error(`default backend ${defaultName} is not one of: ${known}`);
  }
  const metrics = options.metrics ?? new GatewayMetrics();
  const rollouts = new RolloutActions({
    model: options.model,
    backend: options.backend ?? backends[upstreamDefault ? "gate" : defaultName],
    backends,
    gate: requests,
    journal: options.journal,
    images: options.images ?? options.journal ??
      new ImageDirectory(join(tmpdir(), `rollgate-images-${crypto.randomUUID()}`)),
    sampleLog: options.sampleLog,
    idleTimeoutMs: timeouts.rolloutIdleMs,
    teachers: options.teachers,
    teacherScoring: options.teacherScoring,
    turns: {
      pause,
      turnTimeoutMs: timeouts.turnMs,
      abandonGraceMs: timeouts.abandonGraceMs,
      limits,
      observer: metrics,
    },
  });
  const knownPrefixes = new KnownPrefixes(limits.knownPrefixBytes);
  metrics.watch({
    pendingRequests: () => rollouts.pendingRequests(),
    rollouts: () => rollouts.list(),
    damagedSamples: () => rollouts.sampleLog.damagedSamples ?? 0,
    knownPrefixes: () => ({ ...knownPrefixes.stats, bytes: knownPrefixes.bytes }),
  });
  const app = new Hono();
  if (options.accessLog) app.use("*", accessLog(options.accessLog));
  app.use("*", httpMetrics(metrics));
  app.use("*", browserGuard({ loopbackOnly: options.loopbackOnly, publicUrl: options.publicUrl }));
  app.route(
    "/",
    operationsRoutes({
      readiness: options.readiness ?? new Readiness(),
      metrics,
      adminToken: options.adminToken,
    }),
  );
  // Idle rollouts leave memory on the way of later requests (no timer keeps the process busy).
  app.use("*", async (_c, next) => {
    rollouts.sweep();
    await next();
  });
  // The viewer reads the store; it never holds a turn up.
  app.use("/ui", uiAuth(options.adminToken, "/ui"));
  app.use("/ui/*", uiAuth(options.adminToken, "/ui"));
  app.route(
    "/ui",
    viewerRoutes({
      source: liveSource({
        store: rollouts,
        sampleOptions: options.sampleOptions,
        results: options.runResults,
      }),
      decode: (ids) => options.model.decode(ids),
    }),
  );
  app.route(
    "/api",
    trainerRoutes({
      rollouts,
      model: options.model,
      sampleOptions: options.sampleOptions,
      splitSpecialTokens: options.splitSpecialTokens,
      maxBodyBytes: limits.maxTrainerBodyBytes,
      adminToken: options.adminToken,
      publicUrl: options.publicUrl,
      backends: [...Object.keys(backends), ...Object.keys(options.upstreams ?? {})],
      // A black-box default is recorded on each rollout so its requests are forwarded.
      defaultRolloutBackend: upstreamDefault,
      replicated: options.requests !== undefined,
      teacherQueue: options.teacherQueue,
    }),
  );
  app.route(
    "/",
    hostToolRoutes({
      rollouts,
      tools: { ...BUILTIN_HOST_TOOLS, ...options.hostTools },
      maxBodyBytes: limits.maxToolBodyBytes,
      maxBytesPerRollout: limits.maxToolBytesPerRollout,
      adminToken: options.adminToken,
    }),
  );
  app.route(
    "/",
    agentRoutes({
      rollouts,
      maxBodyBytes: limits.maxBodyBytes,
      keepAliveMs: options.keepAliveMs ?? DEFAULT_KEEPALIVE_MS,
      adminToken: options.adminToken,
      modelName: options.modelName ?? "rollgate-policy",
      upstreams: options.upstreams,
      knownPrefixes,
      streamHeadHoldMs: options.streamHeadHoldMs,
    }),
  );
  app.notFound((c) =>
    c.json({
      error: {
        type: "not_found",
        message: `no route for ${c.req.method} ${new URL(c.req.url).pathname}`,
      },
    }, 404)
  );
  return {
    app,
    rollouts,
    model: options.model,
    limits,
    metrics,
    knownPrefixes,
    restore: () => rollouts.restore(),
  };
}
