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
         [--sandbox local|docker|e2b] [--samples K] [--concurrency N] [--policy gate|gold|noop]
         [--out results.jsonl] [--gateway-port P] [--time-budget S] [--model NAME]
         [--model-dir DIR] [--model-family NAME] [--tool-parser NAME] [--template-kwargs JSON]

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
  --model-family NAME   ${FAMILY_NAMES}
                        (default: detected from --model-dir); gold / noop write in its format
  --tool-parser NAME    output parser of the generic family: ${PARSER_NAMES}
  --template-kwargs J   template variables as JSON, e.g. '{"enable_thinking": false}'
                        (each model flag also reads its environment variable, as serve does)
  --public-url URL      the gateway as cloud sandboxes reach it (needed with --sandbox e2b)
  --image NAME          Docker image / E2B template for tasks whose image is "local"

  ROLLGATE_ADMIN_TOKEN  when set, the gateway's /api requires it
`;

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
  return {
    tasks: str("tasks")!,
    harness: str("harness")!,
    sandbox: str("sandbox") ?? "local",
    samples: integerFlag(str("samples"), "--samples", POSITIVE) ?? 1,
    concurrency: integerFlag(str("concurrency"), "--concurrency", POSITIVE) ?? 4,
    policy: policyName(str("policy") ?? "gate"),
    out: str("out") ?? "results.jsonl",
    gatewayPort: integerFlag(str("gateway-port"), "--gateway-port", PORT),
    gatewayHost: str("gateway-host"),
    timeBudgetS: integerFlag(str("time-budget"), "--time-budget", POSITIVE) ??
      DEFAULT_TIME_BUDGET_S,
    model: str("model") ?? DEFAULT_MODEL_NAME,
    modelOptions: modelOptions(values as ModelFlagValues),
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
