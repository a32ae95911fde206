/**
 * The rollout loop behind `main.ts rollout`: checks everything that can be checked up front (tasks
 * path, harness, policy, sandbox backend and its preflight, the CLI), starts the gateway in
 * process (default Qwen3 model) and serves it on TCP so an external trainer can reach `/api`,
 * then runs tasks × K samples with at most N rollouts at once, appending one record per rollout
 * to the results file, skipping `(task, sample)` pairs already recorded there.
 *
 * @example
 * ```ts
 * const { summary } = await runRollouts({
 *   tasks: "tasks", harness: "pi", sandbox: "local", samples: 2, concurrency: 4,
 *   policy: "gold", out: "results.jsonl", timeBudgetS: 300, model: "rollgate-policy",
 * });
 * summary.total.meanReward; // 1
 * ```
 *
 * @module
 */
import {
  createGateway,
  type Gateway,
  isLoopbackHost,
  requireTokenForPublicBind,
} from "../gateway/mod.ts";
import {
  agentInstallHint,
  binaryInstalled,
  type Harness,
  harness as harnessNamed,
} from "../harness/mod.ts";
import { PolicyModel } from "../model/mod.ts";
import {
  AGENTS_NODE_MODULES,
  AGENTS_VENV,
  createSandboxProvider,
  loadTasks,
  type SandboxProvider,
  type SandboxProviderOptions,
  type SweTask,
} from "../sandbox/mod.ts";
import { type RolloutContext, runRollout } from "./one_rollout.ts";
import {
  backendName,
  DEFAULT_GATE_PORT,
  generatedBy,
  policyName,
  type RolloutRunOptions,
  RunnerError,
} from "./options.ts";
import { formatSummary, Progress, type RunSummary, summarize } from "./report.ts";
import { serving } from "./serving.ts";
import { readRecords, recordKey, ResultsWriter, type RolloutRecord } from "./results_file.ts";

/** What a run did. */
export interface RunOutcome {
  /** Records written by this run, in completion order. */
  records: RolloutRecord[];
  /** `(task, sample)` pairs skipped because the results file already had them. */
  skipped: number;
  /** Over every record of the run's tasks in the results file (earlier runs included). */
  summary: RunSummary;
  /** The summary table as printed. */
  table: string;
  /** Where the gateway listened (`/api` is the trainer API). */
  gatewayUrl: string;
  /** True when the run was interrupted before every rollout ran. */
  interrupted: boolean;
}

const encoder = new TextEncoder();
const stderrWrite = (text: string) => Deno.stderr.writeSync(encoder.encode(text));
const stdoutWrite = (text: string) => Deno.stdout.writeSync(encoder.encode(text));

async function loadTaskSet(path: string): Promise<SweTask[]> {
  try {
    await Deno.stat(path);
  } catch {
    throw new RunnerError(`tasks path ${path} does not exist`);
  }
  let tasks: SweTask[];
  try {
    tasks = await loadTasks(path);
  } catch (err) {
    throw new RunnerError(`cannot load tasks from ${path}: ${(err as Error).message}`);
  }
  if (tasks.length === 0) {
    throw new RunnerError(
      `no tasks in ${path} (expected a task directory with task.json, a directory of them, ` +
        "or a .jsonl file)",
    );
  }
  return tasks;
}

function harnessOf(name: string): Harness {
  try {
    return harnessNamed(name);
  } catch (err) {
    throw new RunnerError((err as Error).message);
  }
}

/** The chosen backend, checked by its preflight. */
async function sandboxProvider(
  o: RolloutRunOptions,
  h: Harness,
  tasks: SweTask[],
): Promise<SandboxProvider> {
  const given = o.sandboxOptions ?? {};
  const opts: SandboxProviderOptions = {
    ...given,
    docker: { ...given.docker, ...(o.image ? { defaultImage: o.image } : {}) },
    e2b: { ...given.e2b, ...(o.image ? { defaultTemplate: o.image } : {}) },
  };
  let provider: SandboxProvider;
  try {
    provider = createSandboxProvider(o.sandbox, opts);
  } catch (err) {
    throw new RunnerError((err as Error).message);
  }
  if (o.sandbox === "e2b" && !o.publicUrl) {
    throw new RunnerError(
      "--sandbox e2b: a cloud sandbox cannot reach this machine's loopback; pass --public-url " +
        "with a public or tunnelled URL of the gateway port (--gateway-port)",
    );
  }
  if (
    o.sandbox === "docker" && !opts.docker?.defaultImage && tasks.some((t) => t.image === "local")
  ) {
    throw new RunnerError(
      '--sandbox docker: tasks with image "local" need --image (a Docker image with git, ' +
        `python3, node and ${h.bin})`,
    );
  }
  try {
    await provider.preflight();
  } catch (err) {
    throw new RunnerError(`sandbox preflight failed: ${(err as Error).message}`);
  }
  if (o.sandbox === "local") {
    const binDir = localBinDir(h, given.local ?? {});
    if (!binDir || !binaryInstalled(h, binDir)) {
      throw new RunnerError(
        `${h.bin} is not installed in ${binDir ?? "(no agents dir)"}; the local sandbox binds ` +
          `that directory: run \`${agentInstallHint(h)}\` (${h.package}@${h.version})`,
      );
    }
  }
  return provider;
}

/** The directory of the local sandbox's `PATH` that must hold `h`'s CLI, or `null` for none. */
function localBinDir(
  h: Harness,
  local: { agentsDir?: string | null; agentsVenv?: string | null },
): string | null {
  if (h.registry === "pypi") {
    const venv = local.agentsVenv === undefined ? AGENTS_VENV : local.agentsVenv;
    return venv ? `${venv}/bin` : null;
  }
  const agents = local.agentsDir === undefined ? AGENTS_NODE_MODULES : local.agentsDir;
  return agents ? `${agents}/.bin` : null;
}

/** Serves the gateway on TCP; the URL it listens on. */
function listen(
  gw: Gateway,
  o: RolloutRunOptions,
  trainerAnswers: boolean,
): { server: Deno.HttpServer<Deno.NetAddr>; url: string } {
  const hostname = o.gatewayHost ?? "127.0.0.1";
  const port = o.gatewayPort ?? (trainerAnswers ? DEFAULT_GATE_PORT : 0);
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({ hostname, port, onListen() {} }, gw.app.fetch);
  } catch (err) {
    throw new RunnerError(
      `cannot serve the gateway on ${hostname}:${port}: ${(err as Error).message}; ` +
        "choose another --gateway-port",
    );
  }
  const host = server.addr.hostname.includes(":")
    ? `[${server.addr.hostname}]`
    : server.addr.hostname;
  return { server, url: `http://${host}:${server.addr.port}` };
}

async function stop(server: Deno.HttpServer): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  // A trainer's long poll or sample stream may hold a connection open: give it 2 s.
  const grace = new Promise<void>((r) => timer = setTimeout(r, 2_000));
  await Promise.race([server.shutdown().catch(() => {}), grace]);
  clearTimeout(timer);
}

function rolloutIdOf(prefix: string, task: string, sample: number): string {
  return `${prefix}-${task.slice(0, 96)}-${sample}`;
}

/** Runs the rollouts `o` describes. Throws {@link RunnerError} for every setup problem. */
export async function runRollouts(o: RolloutRunOptions): Promise<RunOutcome> {
  const log = o.log ?? stderrWrite;
  const print = o.print ?? stdoutWrite;
  const h = harnessOf(o.harness);
  const policy = policyName(o.policy);
  const backend = backendName(o.backend ?? "gate");
  const generator = generatedBy({ policy, backend });
  // An external trainer answers on /api: it needs the gateway at a known port.
  const trainerAnswers = backend === "gate" && policy === "gate";
  const tasks = await loadTaskSet(o.tasks);
  const ids = new Set<string>();
  for (const t of tasks) {
    if (ids.has(t.instance_id)) throw new RunnerError(`duplicate task id ${t.instance_id}`);
    ids.add(t.instance_id);
  }
  const served = await serving(o, backend, h, log);
  const provider = await sandboxProvider(o, h, tasks);
  const existing = await readRecords(o.out).catch((err) => {
    throw new RunnerError(`cannot read ${o.out}: ${(err as Error).message}`);
  });
  const jobs: { task: SweTask; sample: number }[] = [];
  let skipped = 0;
  for (let sample = 0; sample < o.samples; sample++) {
    for (const task of tasks) {
      const done = existing.get(recordKey(task.instance_id, sample));
      if (done && !done.error) skipped++;
      else jobs.push({ task, sample });
    }
  }

  if (jobs.length === 0) {
    log(`rollgate rollout: all ${skipped} rollout(s) already in ${o.out}; nothing to run\n`);
    return finish(o, tasks, [], skipped, "", print);
  }

  const adminToken = Deno.env.get("ROLLGATE_ADMIN_TOKEN") || undefined;
  const hostname = o.gatewayHost ?? "127.0.0.1";
  try {
    requireTokenForPublicBind(hostname, adminToken);
  } catch (err) {
    throw new RunnerError((err as Error).message);
  }
  const model = o.policyModel ?? await PolicyModel.load(o.modelOptions);
  const records: RolloutRecord[] = [];
  const gw = createGateway({
    model,
    modelName: o.model,
    adminToken,
    backends: served.backends,
    upstreams: served.upstreams,
    defaultBackend: backend,
    publicUrl: o.publicUrl,
    loopbackOnly: isLoopbackHost(hostname),
    // The viewer at /ui shows each rollout's result (earlier runs' too) once it is graded.
    runResults: () => [...existing.values(), ...records],
  });
  const { server, url } = listen(gw, o, trainerAnswers);
  const writer = await ResultsWriter.open(o.out).catch(async (err) => {
    await stop(server);
    throw new RunnerError(`cannot write ${o.out}: ${(err as Error).message}`);
  });
  const prefix = o.rolloutPrefix ?? `r${crypto.randomUUID().slice(0, 8)}`;
  try {
    const total = tasks.length * o.samples;
    log(
      `rollgate rollout: ${tasks.length} task(s) × ${o.samples} sample(s) = ${total} ` +
        `rollout(s), ${skipped} already in ${o.out}, ${jobs.length} to run; ` +
        `harness ${h.name}, sandbox ${provider.name}, ${served.describe}, ` +
        `concurrency ${o.concurrency}\n` +
        `gateway ${url} (trainer API ${url}/api)\n`,
    );
    if (trainerAnswers) {
      log(
        `waiting for a trainer: GET ${url}/api/requests/next?wait=30, then POST ` +
          `${url}/api/requests/<id>/complete; samples stream at ${url}/api/samples/stream\n`,
      );
    }
    const progress = new Progress(jobs.length, log, o.tty ?? Deno.stderr.isTerminal());
    const ctx: RolloutContext = {
      gw,
      apiHeaders: adminToken ? { authorization: `Bearer ${adminToken}` } : {},
      provider,
      harness: h,
      policy,
      backend,
      generator,
      model: o.model,
      budgetMs: o.timeBudgetS * 1000,
      publicUrl: o.publicUrl,
      signal: o.signal,
    };
    let next = 0;
    const worker = async () => {
      while (!o.signal?.aborted && next < jobs.length) {
        const { task, sample } = jobs[next++];
        progress.started();
        const id = rolloutIdOf(prefix, task.instance_id, sample);
        const record = await runRollout(ctx, task, sample, id);
        if (record) {
          await writer.append(record);
          records.push(record);
        }
        progress.finished(record);
      }
    };
    await Promise.all(Array.from({ length: Math.min(o.concurrency, jobs.length) }, worker));
    progress.end();
  } finally {
    await writer.close();
    await stop(server);
  }

  return finish(o, tasks, records, skipped, url, print);
}

/** Prints the summary over the results file and assembles the outcome. */
async function finish(
  o: RolloutRunOptions,
  tasks: SweTask[],
  records: RolloutRecord[],
  skipped: number,
  gatewayUrl: string,
  print: (text: string) => void,
): Promise<RunOutcome> {
  const all = await readRecords(o.out);
  const inRun = [...all.values()].filter((r) => r.sample < o.samples);
  const summary = summarize(tasks.map((t) => t.instance_id), inRun, o.samples);
  const table = formatSummary(summary);
  print(table);
  const interrupted = Boolean(o.signal?.aborted) &&
    records.length + skipped < tasks.length * o.samples;
  return { records, skipped, summary, table, gatewayUrl, interrupted };
}
