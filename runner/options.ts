/**
 * What one run of the rollout loop needs ({@link RolloutRunOptions}; `main.ts rollout` parses
 * its flags into it, in `cli/rollout.ts`), and the one-line error ({@link RunnerError}) for
 * anything wrong before a rollout starts.
 *
 * @module
 */
import type { PolicyModel, PolicyModelOptions } from "../model/mod.ts";
import type { SandboxProviderOptions } from "../sandbox/mod.ts";

/** A user-facing failure of the runner: printed as one line, never with a stack trace. */
export class RunnerError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RunnerError";
  }
}

/**
 * Who answers the gate's requests (with `--backend gate`). `gate`: an external trainer on the
 * gateway's `/api`. `gold` / `noop`: scripted self-test policies (apply the task's gold patch / do
 * nothing). `wrong` (hidden, for the self-test): apply a deliberately broken patch.
 */
export type PolicyName = "gate" | "gold" | "noop" | "wrong";

/**
 * Where the agents' completions come from. `gate`: the interception gate, answered by `policy`
 * (an external trainer, or a scripted self-test policy). `vllm`: a vLLM server (`vllmUrl`), token
 * for token like the gate. `anthropic` / `openai`: a hosted API (black-box evaluation: the
 * agent's requests are forwarded, samples are message-level, no token ids).
 */
export type BackendName = "gate" | "vllm" | "anthropic" | "openai";

/** Every backend, in the order the usage text lists them. */
export const BACKENDS: readonly BackendName[] = ["gate", "vllm", "anthropic", "openai"];

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
  /** Who answers the gate; only `gate` (the default) with a backend other than `gate`. */
  policy: PolicyName;
  /** Where completions come from; default `gate`. */
  backend?: BackendName;
  /** The vLLM server (`backend: "vllm"`), e.g. `http://127.0.0.1:8000`. */
  vllmUrl?: string;
  /** The `model` sent to vLLM (its served model name); omitted when unset. */
  engineModel?: string;
  /** The hosted API's base URL (`backend: "anthropic" | "openai"`), in its SDK's form. */
  upstreamUrl?: string;
  /** Replaces the agents' `model` in upstream requests (the agents name the policy). */
  upstreamModel?: string;
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
  /**
   * The policy model: tokenizer files (default: bundled Qwen3), family (default: detected),
   * the generic family's tool parser, template variables. The scripted policies write replies
   * in this family's format.
   */
  modelOptions?: PolicyModelOptions;
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

/** Checks a policy name. */
export function policyName(value: string): PolicyName {
  if (!(ALL_POLICIES as readonly string[]).includes(value)) {
    throw new RunnerError(`unknown policy ${value}; known: ${POLICIES.join(", ")}`);
  }
  return value as PolicyName;
}

/** Checks a backend name. */
export function backendName(value: string): BackendName {
  if (!(BACKENDS as readonly string[]).includes(value)) {
    throw new RunnerError(`unknown backend ${value}; known: ${BACKENDS.join(", ")}`);
  }
  return value as BackendName;
}

/**
 * What the run's rollouts record as their policy: the gate's answerer with `--backend gate`, else
 * the backend (an engine or a hosted API generated every token).
 */
export function generatedBy(o: Pick<RolloutRunOptions, "policy" | "backend">): string {
  const backend = o.backend ?? "gate";
  if (backend !== "gate" && o.policy !== "gate") {
    throw new RunnerError(
      `--policy ${o.policy} answers the gate's requests in process; with --backend ${backend} ` +
        `the ${backend === "vllm" ? "engine" : "upstream"} answers them: drop --policy`,
    );
  }
  return backend === "gate" ? o.policy : backend;
}
