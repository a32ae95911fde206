/**
 * The flags of `serve` and the backends `--backend` names: one list that `serve.ts` parses and
 * `usage.ts` (the `--help` text) is checked against.
 *
 * @module
 */
import { MODEL_FLAGS } from "./model_flags.ts";
import { LIMIT_FLAGS } from "./serve_limits.ts";
import { TEACHER_FLAGS } from "./teacher_flags.ts";

/** Who generates for rollouts that name no backend (`--backend`). */
export const SERVE_BACKENDS = ["gate", "vllm", "sglang", "anthropic", "openai"] as const;

/** Every flag of `serve`, as `parseArgs` options; `usage.ts` lists each one. */
export const SERVE_FLAGS = {
  port: { type: "string" },
  host: { type: "string" },
  ...MODEL_FLAGS,
  "context-length": { type: "string" },
  ...LIMIT_FLAGS,
  "data-dir": { type: "string" },
  "no-journal": { type: "boolean" },
  "database-url": { type: "string" },
  "advertise-url": { type: "string" },
  "owner-lease": { type: "string" },
  "public-url": { type: "string" },
  "model-name": { type: "string" },
  backend: { type: "string" },
  "upstream-anthropic-url": { type: "string" },
  "upstream-openai-url": { type: "string" },
  "upstream-model": { type: "string" },
  "vllm-url": { type: "string" },
  "sglang-url": { type: "string" },
  "engine-model": { type: "string" },
  "engine-timeout-ms": { type: "string" },
  "engine-retries": { type: "string" },
  "engine-stream": { type: "boolean" },
  "vllm-api": { type: "string" },
  "sglang-routed-experts": { type: "string" },
  "logprobs-mode": { type: "string" },
  "max-staleness": { type: "string" },
  ...TEACHER_FLAGS,
  "split-special-tokens": { type: "boolean" },
  "access-log": { type: "boolean" },
  "drain-grace": { type: "string" },
  "pid-file": { type: "string" },
  help: { type: "boolean" },
} as const;
