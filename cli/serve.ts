/**
 * The `serve` verb (the default): the gateway on a TCP port, with the generation backends and
 * black-box upstreams its flags and environment name.
 *
 * It opens its journal (`--data-dir`, default `./rollgate-data`; `--no-journal` for none) and
 * listens before the model files are loaded: `/health` answers at once, `/ready` once the model is
 * loaded and the journal restored (503 with the failing check before, while a shutdown drains, and
 * when the journal cannot be written). A non-loopback address needs `ROLLGATE_ADMIN_TOKEN`.
 * SIGTERM drains (see `shutdown.ts`).
 *
 * @module
 */
import {
  checkUpstream,
  createGateway,
  type Gateway,
  GatewayMetrics,
  isLoopbackHost,
  operationsRoutes,
  Readiness,
  requireTokenForPublicBind,
  serveHttp,
  upstreamsFromFlags,
} from "../gateway/mod.ts";
import {
  type GenerationBackend,
  SglangBackend,
  VllmBackend,
  type VllmOptions,
} from "../generation/mod.ts";
import { PolicyModel } from "../model/mod.ts";
import { COUNT, integerFlag, parseFlags, PORT, POSITIVE } from "./flags.ts";
import { DEFAULT_DRAIN_GRACE_S, drainGateway, onShutdownSignal } from "./shutdown.ts";
import { modelOptions } from "./model_flags.ts";
import { SERVE_BACKENDS, SERVE_FLAGS } from "./serve_flags.ts";
import { teachersFromFlags } from "./teacher_flags.ts";
import { serveLimits } from "./serve_limits.ts";
import { JournalDamagedError, JournalLockedError, SqliteJournal } from "../journal/mod.ts";
import { Cluster } from "../cluster/mod.ts";
import { USAGE } from "./usage.ts";
import { UsageError } from "./usage_error.ts";

/** Where the journal goes when `--data-dir` is not given: under the working directory. */
export const DEFAULT_DATA_DIR = "rollgate-data";

/** The journal `serve` writes to, or none with `--no-journal`. */
function openJournal(off: boolean | undefined, dir: string | undefined): SqliteJournal | undefined {
  if (off) {
    if (dir) throw new UsageError("--no-journal and --data-dir exclude each other");
    return undefined;
  }
  try {
    return new SqliteJournal(dir ?? DEFAULT_DATA_DIR);
  } catch (e) {
    if (e instanceof JournalLockedError || e instanceof JournalDamagedError) {
      throw new UsageError(e.message);
    }
    throw new UsageError(
      `cannot open the journal in ${dir ?? DEFAULT_DATA_DIR}: ${
        (e as Error).message
      } (name a writable --data-dir, or run with --no-journal)`,
    );
  }
}

/** Joins the gateway whose replicas share the database at `url`. */
async function openCluster(
  url: string,
  o: {
    advertiseUrl: string;
    leaseS?: number;
    adminToken?: string;
    delivery?: { ackTimeoutMs?: number; defaultLeaseMs?: number; maxLeaseMs?: number };
  },
): Promise<Cluster> {
  try {
    return await Cluster.open({
      databaseUrl: url,
      advertiseUrl: o.advertiseUrl,
      leaseMs: o.leaseS === undefined ? undefined : o.leaseS * 1000,
      adminToken: o.adminToken,
      delivery: o.delivery,
      // A replica that stalled past its leases holds stale state: exit for a clean start.
      stop: () => Deno.exit(75),
    });
  } catch (e) {
    throw new UsageError(
      `cannot open the database ${url.replace(/\/\/[^@/]*@/, "//…@")}: ${(e as Error).message}`,
    );
  }
}

/** Why the port could not be bound, in words that say what to do. */
function listenFailure(hostname: string, port: number, e: Error & { code?: string }): string {
  const where = `${hostname}:${port}`;
  switch (e.code) {
    case "EADDRINUSE":
      return `${where} is in use (another rollgate? stop it, or choose another --port)`;
    case "EACCES":
      return `cannot listen on ${where}: permission denied (ports below 1024 need privileges)`;
    case "EADDRNOTAVAIL":
    case "ENOTFOUND":
      return `cannot listen on ${where}: --host ${hostname} is not an address of this machine`;
    default:
      return `cannot listen on ${where}: ${e.message}`;
  }
}

/** `1`, `true`, `yes`, `on` (any case) turn a boolean environment setting on. */
function envFlag(value: string | undefined): boolean {
  return /^(1|true|yes|on)$/i.test(value ?? "");
}

/** `--sglang-routed-experts LAYERSxTOP_KxEXPERTS`, e.g. `48x8x128`. */
function routedExpertsFlag(
  value: string | undefined,
): { layers: number; topK: number; experts: number } | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d+)x(\d+)x(\d+)$/.exec(value);
  const [layers, topK, experts] = m ? m.slice(1).map(Number) : [];
  if (!m || layers < 1 || topK < 1 || experts < topK || experts > 65536) {
    throw new UsageError(
      `--sglang-routed-experts must be LAYERSxTOP_KxEXPERTS (e.g. 48x8x128), got ${value}`,
    );
  }
  return { layers, topK, experts };
}

/**
 * Runs `main.ts serve <args>`: checks every flag (the model flags against the model files), binds
 * the port, loads the model and serves until the process ends.
 */
export async function serve(args: string[]): Promise<void> {
  const { values } = parseFlags("serve", args, SERVE_FLAGS);
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const env = (k: string) => Deno.env.get(k) || undefined;
  const port = integerFlag(values.port ?? env("ROLLGATE_PORT"), "--port", PORT) ?? 7860;
  const hostname = values.host ?? env("ROLLGATE_HOST") ?? "127.0.0.1";
  const adminToken = env("ROLLGATE_ADMIN_TOKEN");
  requireTokenForPublicBind(hostname, adminToken);
  const drainGrace = integerFlag(
    values["drain-grace"] ?? env("ROLLGATE_DRAIN_GRACE"),
    "--drain-grace",
    COUNT,
  ) ?? DEFAULT_DRAIN_GRACE_S;
  const engine = {
    timeoutMs: integerFlag(values["engine-timeout-ms"], "--engine-timeout-ms", POSITIVE),
    retries: integerFlag(values["engine-retries"], "--engine-retries", COUNT),
  };
  const vllmUrl = values["vllm-url"] ?? env("ROLLGATE_VLLM_URL");
  const modelLoad = {
    ...modelOptions(values, { url: vllmUrl, model: values["engine-model"], ...engine }),
    contextLength: integerFlag(values["context-length"], "--context-length", POSITIVE),
  };
  // The model flags against the model files, before the port: the slow load comes after it.
  await PolicyModel.check(modelLoad);
  const backends: Record<string, GenerationBackend> = {};
  const sglangUrl = values["sglang-url"] ?? env("ROLLGATE_SGLANG_URL");
  const logprobsMode = values["logprobs-mode"] ?? "raw";
  if (logprobsMode !== "raw" && logprobsMode !== "processed") {
    throw new UsageError(`--logprobs-mode must be raw or processed, got ${logprobsMode}`);
  }
  const vllmApi = values["vllm-api"] ?? "auto";
  if (!["auto", "generate", "completions"].includes(vllmApi)) {
    throw new UsageError(`--vllm-api must be auto, generate or completions, got ${vllmApi}`);
  }
  if (vllmUrl) {
    backends.vllm = new VllmBackend({
      url: vllmUrl,
      model: values["engine-model"],
      api: vllmApi as VllmOptions["api"],
      stream: values["engine-stream"],
      logprobsMode,
      ...engine,
    });
  }
  if (sglangUrl) {
    backends.sglang = new SglangBackend({
      url: sglangUrl,
      logprobsMode,
      routedExperts: routedExpertsFlag(values["sglang-routed-experts"]),
      ...engine,
    });
  }
  const databaseUrl = values["database-url"] ?? env("ROLLGATE_DATABASE_URL");
  const maxStaleness = integerFlag(values["max-staleness"], "--max-staleness", COUNT);
  const teaching = teachersFromFlags(values, {
    replicated: databaseUrl !== undefined,
    engine,
    env: env("ROLLGATE_TEACHER_URL"),
  });
  const upstreamFlags = {
    anthropicUrl: values["upstream-anthropic-url"] ?? env("ROLLGATE_UPSTREAM_ANTHROPIC_URL"),
    openaiUrl: values["upstream-openai-url"] ?? env("ROLLGATE_UPSTREAM_OPENAI_URL"),
    model: values["upstream-model"],
    timeoutMs: engine.timeoutMs,
  };
  // Each URL in its SDK's form and its key there (a hosted API's missing key stops the start).
  for (const provider of ["anthropic", "openai"] as const) {
    const url = upstreamFlags[`${provider}Url`];
    if (!url) continue;
    for (const warning of checkUpstream(provider, url, `--upstream-${provider}-url`)) {
      console.error(`rollgate: warning: ${warning}`);
    }
  }
  const upstreams = upstreamsFromFlags(upstreamFlags);
  const defaultBackend = values.backend ?? env("ROLLGATE_BACKEND") ?? "gate";
  if (!(SERVE_BACKENDS as readonly string[]).includes(defaultBackend)) {
    throw new UsageError(
      `--backend must be one of ${SERVE_BACKENDS.join(", ")}, got ${defaultBackend}`,
    );
  }
  if (!(defaultBackend === "gate" || backends[defaultBackend] || upstreams[defaultBackend])) {
    const flag = ["anthropic", "openai"].includes(defaultBackend)
      ? `upstream-${defaultBackend}`
      : defaultBackend;
    throw new UsageError(`--backend ${defaultBackend} needs --${flag}-url`);
  }
  const bounds = serveLimits(values, env);
  const dataDir = values["data-dir"] ?? env("ROLLGATE_DATA_DIR");
  if (databaseUrl && (values["data-dir"] || values["no-journal"])) {
    throw new UsageError(
      "--database-url puts the journal in PostgreSQL: drop --data-dir/--no-journal",
    );
  }
  const journal = databaseUrl ? undefined : openJournal(values["no-journal"], dataDir);
  const cluster = databaseUrl
    ? await openCluster(databaseUrl, {
      advertiseUrl: values["advertise-url"] ?? env("ROLLGATE_ADVERTISE_URL") ??
        `http://${hostname}:${port}`,
      leaseS: integerFlag(
        values["owner-lease"] ?? env("ROLLGATE_OWNER_LEASE"),
        "--owner-lease",
        POSITIVE,
      ),
      adminToken,
      delivery: bounds.delivery,
    })
    : undefined;
  let front: ((req: Request, info?: unknown) => Promise<Response>) | undefined;

  // Listen first: liveness at once, readiness once the model is loaded and the journal restored.
  let gw: Gateway | undefined = undefined;
  let starting = "loading the model files";
  let draining = false;
  const metrics = new GatewayMetrics();
  const readiness = new Readiness()
    .add("model", () => gw !== undefined || starting)
    .add("accepting turns", () => !draining || "draining: shutting down, no new turns");
  if (cluster) readiness.add("database", () => cluster.reachable);
  if (journal) {
    readiness.add("journal", () => {
      const failure = gw?.rollouts.journalFailure;
      return failure ? `${journal.path}: ${failure.message}` : true;
    });
  }
  const startingApp = operationsRoutes({ readiness, metrics, adminToken });
  startingApp.all(
    "*",
    (c) =>
      c.json({ error: { type: "unavailable", message: `rollgate is starting: ${starting}` } }, 503),
  );
  const server = await serveHttp(
    (req, info) => front ? front(req, info) : (gw?.app ?? startingApp).fetch(req, info),
    { hostname, port, timeouts: bounds.http, connections: bounds.connections },
  ).catch((e) => {
    journal?.close();
    throw new UsageError(listenFailure(hostname, port, e));
  });
  const pidFile = values["pid-file"];
  if (pidFile) await Deno.writeTextFile(pidFile, `${Deno.pid}\n`);
  console.log(
    `rollgate listening on http://${hostname}:${server.addr.port}; loading the model files`,
  );
  onShutdownSignal(async () => {
    draining = true;
    metrics.setDraining(true);
    if (gw) await drainGateway(gw, server, drainGrace);
    await gw?.rollouts.durable().catch(() => {});
    journal?.close();
    await cluster?.close();
    if (pidFile) await Deno.remove(pidFile).catch(() => {});
  });

  const model = await PolicyModel.load(modelLoad).catch(async (e) => {
    await server.shutdown();
    throw e;
  });
  const created = createGateway({
    journal: cluster?.journal ?? journal,
    requests: cluster?.requests,
    model,
    backends,
    upstreams,
    defaultBackend,
    adminToken,
    limits: bounds.limits,
    timeouts: bounds.timeouts,
    delivery: bounds.delivery,
    publicUrl: values["public-url"] ?? env("ROLLGATE_PUBLIC_URL"),
    modelName: values["model-name"],
    splitSpecialTokens: values["split-special-tokens"],
    ...(maxStaleness !== undefined ? { sampleOptions: { maxStaleness } } : {}),
    teachers: teaching.teachers,
    teacherQueue: teaching.queue,
    loopbackOnly: isLoopbackHost(hostname),
    accessLog: values["access-log"] || envFlag(env("ROLLGATE_ACCESS_LOG"))
      ? (line) => console.log(line)
      : undefined,
    metrics,
    readiness,
  });
  starting = "restoring the journal";
  const restored = await created.restore().catch(async (e) => {
    await server.shutdown();
    journal?.close();
    throw new UsageError(
      `the journal ${journal?.path} cannot be restored: ${
        (e as Error).message
      }. rollgate does not start on part of it. ` +
        `Keep a copy of its directory; then start empty with another --data-dir (samples the trainer already read are not affected)`,
    );
  });
  if (restored) {
    console.log(
      `rollgate: journal ${
        (cluster?.journal ?? journal)!.path
      }: restored ${restored.rollouts} rollout(s), ${restored.turns} turn(s), ${restored.requeued} request(s) back in the queue, ${restored.interrupted} interrupted, ${restored.expired} expired, in ${
        restored.ms.toFixed(0)
      } ms`,
    );
  }
  if (cluster) front = await cluster.attach(created, bounds.limits.maxTrainerBodyBytes ?? 16 << 20);
  gw = created;
  console.log(
    `rollgate ready (model ${model.files.dir}, family ${model.family}, tokenizer ` +
      `${model.tokenizer.engine}, backend ${defaultBackend}${
        adminToken ? ", admin token set" : ""
      }${
        cluster
          ? `, replica ${cluster.replica} of the gateway in ${cluster.journal.path}`
          : journal
          ? `, journal ${journal.path}`
          : ", no journal"
      })`,
  );
  for (const note of model.format.notes ?? []) console.log(`rollgate: ${note}`);
}
