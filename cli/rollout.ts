/**
 * The `rollout` verb of `main.ts`: parses the flags into {@link RolloutRunOptions}, wires Ctrl-C
 * (first: stop scheduling and kill running agents, nothing half-done is recorded; second: exit at
 * once) and runs {@link runRollouts}. Flag mistakes ({@link UsageError}) and setup problems (`RunnerError`)
 * surface as one line, no stack trace.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { HARNESSES } from "../harness/mod.ts";
import { FAMILIES, GENERIC_FAMILY, TOOL_PARSERS } from "../model/mod.ts";
import {
  type BackendName,
  backendName,
  BACKENDS,
  DEFAULT_GATE_PORT,
  DEFAULT_MODEL_NAME,
  DEFAULT_TIME_BUDGET_S,
  policyName,
  type RolloutRunOptions,
  runRollouts,
} from "../runner/mod.ts";
import { integerFlag, PORT, POSITIVE } from "./flags.ts";
import { MODEL_FLAGS, type ModelFlagValues, modelOptions } from "./model_flags.ts";
import { UsageError } from "./usage_error.ts";

const HARNESS_NAMES = Object.keys(HARNESSES);
const FAMILY_NAMES = [...FAMILIES, GENERIC_FAMILY].map((f) => f.name).join(" | ");
const PARSER_NAMES = TOOL_PARSERS.map((p) => p.name).join(" | ");

export const ROLLOUT_USAGE = `usage: main.ts rollout --tasks <dir|file.jsonl> --harness ${
  HARNESS_NAMES.join("|")
}
         [--sandbox local|docker|e2b] [--samples K] [--concurrency N]
         [--backend ${BACKENDS.join("|")}] [--policy gate|gold|noop] [--vllm-url URL]
         [--upstream-anthropic-url URL | --upstream-openai-url URL] [--upstream-model NAME]
         [--out results.jsonl] [--gateway-port P] [--time-budget S] [--model NAME]
         [--model-dir DIR] [--model-family NAME] [--tool-parser NAME] [--template-kwargs JSON]

  Runs every task K times with the agent CLI inside a sandbox, grades each diff in a fresh
  sandbox, and appends one JSON record per rollout to --out (rollouts already there are skipped).
  The summary gives per task the mean reward and pass@k (unbiased estimator, k up to K).

  --tasks PATH          task directory, directory of tasks (e.g. tasks/), or SWE-bench JSONL
  --harness NAME        agent CLI: ${HARNESS_NAMES.join(", ")}
  --sandbox NAME        local (bubblewrap, default), docker (Engine API), e2b
  --samples K           rollouts per task (default 1)
  --concurrency N       rollouts at once (default 4)
  --backend NAME        where the agents' completions come from (default gate):
                        gate: the interception gate, answered as --policy says;
                        vllm: a vLLM server (--vllm-url), token ids and logprobs recorded;
                        anthropic / openai: a hosted API (black-box evaluation: requests
                        forwarded as sent, message-level samples, no token ids)
  --policy NAME         who answers the gate (--backend gate only):
                        gate: an external trainer on the gateway's /api (default);
                        gold / noop: scripted self-test policies (gold patch: reward 1; nothing: 0)
  --vllm-url URL        the vLLM server (env ROLLGATE_VLLM_URL); --engine-model NAME: its model
  --upstream-anthropic-url URL   Anthropic API base, without /v1 (env ROLLGATE_UPSTREAM_ANTHROPIC_URL;
                        key ANTHROPIC_API_KEY), e.g. https://api.anthropic.com
  --upstream-openai-url URL      OpenAI-compatible base, with /v1 (env ROLLGATE_UPSTREAM_OPENAI_URL;
                        key OPENAI_API_KEY), e.g. https://api.openai.com/v1
  --upstream-model NAME replaces the agents' model in upstream requests
  --out FILE            results, JSON Lines (default results.jsonl)
  --gateway-port P      TCP port of the gateway (default ${DEFAULT_GATE_PORT} with --policy gate, else any free)
  --gateway-host H      its address (default 127.0.0.1)
  --time-budget S       one agent run's wall-clock budget, seconds (default ${DEFAULT_TIME_BUDGET_S})
  --model NAME          model id the agents send (default ${DEFAULT_MODEL_NAME})
  --model-dir DIR       tokenizer files of the policy (default: bundled Qwen3)
  --model-family NAME   ${FAMILY_NAMES}
                        (default: detected from --model-dir); gold / noop write in its format
  --tool-parser NAME    output parser of the generic family: ${PARSER_NAMES}
  --template-kwargs J   template variables as JSON, e.g. '{"enable_thinking": false}'
                        (each model flag also reads its environment variable, as serve does)
  --public-url URL      the gateway as cloud sandboxes reach it (needed with --sandbox e2b)
  --image NAME          Docker image / E2B template for tasks whose image is "local"

  ROLLGATE_ADMIN_TOKEN  when set, the gateway's /api requires it
`;

/** The backends each backend-specific flag applies to. */
const FLAG_BACKENDS: Readonly<Record<string, readonly BackendName[]>> = {
  policy: ["gate"],
  "vllm-url": ["vllm"],
  "engine-model": ["vllm"],
  "upstream-anthropic-url": ["anthropic"],
  "upstream-openai-url": ["openai"],
  "upstream-model": ["anthropic", "openai"],
};

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
        backend: { type: "string" },
        "vllm-url": { type: "string" },
        "engine-model": { type: "string" },
        "upstream-anthropic-url": { type: "string" },
        "upstream-openai-url": { type: "string" },
        "upstream-model": { type: "string" },
        out: { type: "string" },
        "gateway-port": { type: "string" },
        "gateway-host": { type: "string" },
        "time-budget": { type: "string" },
        model: { type: "string" },
        ...MODEL_FLAGS,
        "public-url": { type: "string" },
        image: { type: "string" },
        help: { type: "boolean" },
      },
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n\n${ROLLOUT_USAGE}`);
  }
  if (values.help) return undefined;
  const str = (k: string) => values[k] as string | undefined;
  if (!str("tasks")) throw new UsageError(`--tasks is required\n\n${ROLLOUT_USAGE}`);
  if (!str("harness")) throw new UsageError(`--harness is required\n\n${ROLLOUT_USAGE}`);
  const env = (k: string) => Deno.env.get(k) || undefined;
  const backend = backendName(str("backend") ?? "gate");
  const urls = {
    vllm: str("vllm-url") ?? env("ROLLGATE_VLLM_URL"),
    anthropic: str("upstream-anthropic-url") ?? env("ROLLGATE_UPSTREAM_ANTHROPIC_URL"),
    openai: str("upstream-openai-url") ?? env("ROLLGATE_UPSTREAM_OPENAI_URL"),
  };
  // A flag of another backend would be ignored: say so instead.
  for (const [flag, backends] of Object.entries(FLAG_BACKENDS)) {
    if (str(flag) !== undefined && !backends.includes(backend)) {
      throw new UsageError(
        `--${flag} is for --backend ${backends.join(" or ")}; this run's backend is ${backend}` +
          (flag === "policy" ? " (the engine or upstream answers every request)" : ""),
      );
    }
  }
  return {
    tasks: str("tasks")!,
    harness: str("harness")!,
    sandbox: str("sandbox") ?? "local",
    samples: integerFlag(str("samples"), "--samples", POSITIVE) ?? 1,
    concurrency: integerFlag(str("concurrency"), "--concurrency", POSITIVE) ?? 4,
    policy: policyName(str("policy") ?? "gate"),
    backend,
    vllmUrl: backend === "vllm" ? urls.vllm : undefined,
    engineModel: str("engine-model"),
    upstreamUrl: backend === "anthropic" || backend === "openai" ? urls[backend] : undefined,
    upstreamModel: str("upstream-model"),
    out: str("out") ?? "results.jsonl",
    gatewayPort: integerFlag(str("gateway-port"), "--gateway-port", PORT),
    gatewayHost: str("gateway-host"),
    timeBudgetS: integerFlag(str("time-budget"), "--time-budget", POSITIVE) ??
      DEFAULT_TIME_BUDGET_S,
    model: str("model") ?? DEFAULT_MODEL_NAME,
    modelOptions: modelOptions(values as ModelFlagValues, {
      url: urls.vllm,
      model: str("engine-model"),
    }),
    publicUrl: str("public-url"),
    image: str("image"),
  };
}

/** Runs `main.ts rollout <args>`; the process exit code (0 ok, 130 interrupted). */
export async function rolloutCommand(args: string[]): Promise<number> {
  const options = parseRolloutArgs(args);
  if (!options) {
    console.log(ROLLOUT_USAGE);
    return 0;
  }
  const abort = new AbortController();
  const onSignal = () => {
    if (abort.signal.aborted) Deno.exit(130);
    console.error(
      "\nrollgate: interrupted; stopping the running agents (Ctrl-C again to quit now)",
    );
    abort.abort();
  };
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  for (const s of signals) Deno.addSignalListener(s, onSignal);
  try {
    const outcome = await runRollouts({ ...options, signal: abort.signal });
    return outcome.interrupted ? 130 : 0;
  } finally {
    for (const s of signals) Deno.removeSignalListener(s, onSignal);
  }
}
