/**
 * The options of `main.ts rollout` and their parsing: flags → {@link RolloutRunOptions}, with a
 * clear one-line error ({@link RunnerError}) for anything wrong before a rollout starts.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { HARNESSES } from "../harness/mod.ts";
import type { PolicyModel } from "../model/mod.ts";
import type { SandboxProviderOptions } from "../sandbox/mod.ts";

/** A user-facing failure of the runner: printed as one line, never with a stack trace. */
export class RunnerError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RunnerError";
  }
}

/**
 * Who generates the policy's tokens. `gate`: an external trainer on the gateway's `/api`.
 * `gold` / `noop`: scripted self-test policies (apply the task's gold patch / do nothing).
 * `wrong` (hidden, for the self-test): apply a deliberately broken patch.
 */
export type PolicyName = "gate" | "gold" | "noop" | "wrong";

/** Policies listed in the usage text (`wrong` works but is not advertised). */
export const POLICIES: readonly PolicyName[] = ["gate", "gold", "noop"];
const ALL_POLICIES: readonly PolicyName[] = [...POLICIES, "wrong"];

/** Agent wall-clock budget when `--time-budget` is not given: 10 minutes. */
export const DEFAULT_TIME_BUDGET_S = 600;
/** TCP port of the trainer API with `--policy gate` when `--gateway-port` is not given. */
export const DEFAULT_GATE_PORT = 7860;
/** The model id agents put in their requests (and `/v1/models` reports). */
export const DEFAULT_MODEL_NAME = "rollgate-policy";

/** Everything one `rollout` run needs. */
export interface RolloutRunOptions {
  /** A task directory, a directory of task directories, or a SWE-bench `.jsonl` file. */
  tasks: string;
  /** A registered harness: `claude-code`, `codex`, `pi`, … */
  harness: string;
  /** `local` (default) | `docker` | `e2b`. */
  sandbox: string;
  /** Samples (rollouts) per task. */
  samples: number;
  /** At most this many rollouts at once. */
  concurrency: number;
  policy: PolicyName;
  /** Results file (JSON Lines, one record per rollout; appended to, and read to resume). */
  out: string;
  /** TCP port of the in-process gateway (0: any free port). Default 7860 for `gate`, else 0. */
  gatewayPort?: number;
  /** Address the gateway listens on; default 127.0.0.1. */
  gatewayHost?: string;
  /** Wall-clock budget of one agent run, seconds. */
  timeBudgetS: number;
  /** Model id the agents send. */
  model: string;
  /** Directory with the policy's tokenizer files (default: bundled Qwen3). */
  modelDir?: string;
  /** The gateway's URL as cloud sandboxes reach it (required with `--sandbox e2b`). */
  publicUrl?: string;
  /** Docker image / E2B template for tasks whose image is `local`. */
  image?: string;

  // Programmatic only (tests, embedding):
  /** A loaded policy model to reuse (skips loading the tokenizer). */
  policyModel?: PolicyModel;
  /** Per-backend options (e.g. `{ local: { tempDir } }`). */
  sandboxOptions?: SandboxProviderOptions;
  /** Aborting stops scheduling, kills running agents, and records nothing more. */
  signal?: AbortSignal;
  /** Progress lines (default: stderr). */
  log?: (text: string) => void;
  /** Whether `log` is a terminal (redraws a progress bar); default: stderr's. */
  tty?: boolean;
  /** Summary table (default: stdout). */
  print?: (text: string) => void;
  /** Rollout ids start with this; default a random tag per run. */
  rolloutPrefix?: string;
}

const HARNESS_NAMES = Object.keys(HARNESSES);

export const USAGE = `usage: main.ts rollout --tasks <dir|file.jsonl> --harness ${
  HARNESS_NAMES.join("|")
}
         [--sandbox local|docker|e2b] [--samples K] [--concurrency N] [--policy gate|gold|noop]
         [--out results.jsonl] [--gateway-port P] [--time-budget S] [--model NAME]

  Runs every task K times with the agent CLI inside a sandbox, grades each diff in a fresh
  sandbox, and appends one JSON record per rollout to --out (rollouts already there are skipped).

  --tasks PATH          task directory, directory of tasks (e.g. tasks/), or SWE-bench JSONL
  --harness NAME        agent CLI: ${HARNESS_NAMES.join(", ")}
  --sandbox NAME        local (bubblewrap, default), docker (Engine API), e2b
  --samples K           rollouts per task (default 1)
  --concurrency N       rollouts at once (default 4)
  --policy NAME         gate: an external trainer answers on the gateway's /api (default);
                        gold / noop: scripted self-test policies (gold patch: reward 1; nothing: 0)
  --out FILE            results, JSON Lines (default results.jsonl)
  --gateway-port P      TCP port of the gateway (default ${DEFAULT_GATE_PORT} with gate, else any free)
  --gateway-host H      its address (default 127.0.0.1)
  --time-budget S       one agent run's wall-clock budget, seconds (default ${DEFAULT_TIME_BUDGET_S})
  --model NAME          model id the agents send (default ${DEFAULT_MODEL_NAME})
  --model-dir DIR       tokenizer files of the policy (default: bundled Qwen3)
  --public-url URL      the gateway as cloud sandboxes reach it (needed with --sandbox e2b)
  --image NAME          Docker image / E2B template for tasks whose image is "local"

  ROLLGATE_ADMIN_TOKEN  when set, the gateway's /api requires it
`;

function positiveInt(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) {
    throw new RunnerError(`${flag} must be a positive integer, got ${value}`);
  }
  return n;
}

function port(value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new RunnerError(`--gateway-port must be a port number (0-65535), got ${value}`);
  }
  return n;
}

/** Checks a policy name. */
export function policyName(value: string): PolicyName {
  if (!(ALL_POLICIES as readonly string[]).includes(value)) {
    throw new RunnerError(`unknown policy ${value}; known: ${POLICIES.join(", ")}`);
  }
  return value as PolicyName;
}

/** Parses `rollout` flags; `undefined` when `--help` was asked for. */
export function parseRolloutArgs(args: string[]): RolloutRunOptions | undefined {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        tasks: { type: "string" },
        harness: { type: "string" },
        sandbox: { type: "string" },
        samples: { type: "string" },
        concurrency: { type: "string" },
        policy: { type: "string" },
        out: { type: "string" },
        "gateway-port": { type: "string" },
        "gateway-host": { type: "string" },
        "time-budget": { type: "string" },
        model: { type: "string" },
        "model-dir": { type: "string" },
        "public-url": { type: "string" },
        image: { type: "string" },
        help: { type: "boolean" },
      },
    }));
  } catch (err) {
    throw new RunnerError(`${(err as Error).message}\n\n${USAGE}`);
  }
  if (values.help) return undefined;
  const str = (k: string) => values[k] as string | undefined;
  if (!str("tasks")) throw new RunnerError(`--tasks is required\n\n${USAGE}`);
  if (!str("harness")) throw new RunnerError(`--harness is required\n\n${USAGE}`);
  return {
    tasks: str("tasks")!,
    harness: str("harness")!,
    sandbox: str("sandbox") ?? "local",
    samples: positiveInt(str("samples"), "--samples", 1),
    concurrency: positiveInt(str("concurrency"), "--concurrency", 4),
    policy: policyName(str("policy") ?? "gate"),
    out: str("out") ?? "results.jsonl",
    gatewayPort: port(str("gateway-port")),
    gatewayHost: str("gateway-host"),
    timeBudgetS: positiveInt(str("time-budget"), "--time-budget", DEFAULT_TIME_BUDGET_S),
    model: str("model") ?? DEFAULT_MODEL_NAME,
    modelDir: str("model-dir"),
    publicUrl: str("public-url"),
    image: str("image"),
  };
}
