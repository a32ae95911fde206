/**
 * rollgate command line.
 *
 *     deno run -A main.ts serve [--port 7860] [--host 127.0.0.1] [--model-dir DIR]
 *     deno run -A main.ts rollout --tasks tasks --harness pi --policy gold --out results.jsonl
 *
 * @module
 */
import { parseArgs } from "node:util";
import { PolicyModel } from "./model/mod.ts";
import { createGateway } from "./gateway/mod.ts";
import { audit, inspect } from "./cli/trajectory_verbs.ts";
import type { GenerationBackend } from "./model/backends/backend.ts";
import { VllmBackend } from "./model/backends/vllm.ts";
import { SglangBackend } from "./model/backends/sglang.ts";
import { upstreamsFromFlags } from "./model/backends/upstream.ts";
import { DEFAULT_ENGINE_RETRIES, DEFAULT_ENGINE_TIMEOUT_MS } from "./model/backends/engine_http.ts";
import { rolloutCommand } from "./runner/mod.ts";

const USAGE = `usage: main.ts serve [options]
       main.ts inspect <rollout id | tree file> [--gateway URL] [--json]
       main.ts audit <rollout id | tree file> [--gateway URL] [--model-dir DIR] [--json]
       main.ts rollout --tasks <dir|jsonl> --harness NAME [--sandbox local|e2b|docker] [--samples K]
                       [--concurrency N] [--policy gate|gold|noop] [--out results.jsonl]
                       [--gateway-port P] [--time-budget S] [--model NAME]   (see rollout --help)

  --port N              port (env ROLLGATE_PORT, default 7860)
  --host H              address (env ROLLGATE_HOST, default 127.0.0.1)
  --model-dir DIR       directory with tokenizer.json + tokenizer_config.json
                        (env ROLLGATE_MODEL_DIR, default: bundled Qwen3)
  --context-length N    context window in tokens (default: the config's model_max_length)
  --max-body-bytes N    request body cap (env ROLLGATE_MAX_BODY_BYTES, default 64 MiB)
  --public-url URL      base URL agents reach this gateway at (env ROLLGATE_PUBLIC_URL)
  --model-name NAME     model id reported by /v1/models (default rollgate-policy)
  --split-special-tokens  tokenize special-token text in message content as plain text
                        (rollouts may override with split_special_tokens; default off)

  --backend NAME        gate | vllm | sglang | anthropic | openai: who generates for rollouts
                        that name no backend (anthropic/openai: black-box, message-level record)
  --upstream-anthropic-url URL   hosted Anthropic API for black-box rollouts (key: ANTHROPIC_API_KEY)
  --upstream-openai-url URL      hosted OpenAI API for black-box rollouts (key: OPENAI_API_KEY)
  --upstream-model NAME          model id sent upstream instead of the agent's
                        (env ROLLGATE_BACKEND, default gate: the trainer answers via /api)
  --vllm-url URL        a vLLM OpenAI-compatible server (env ROLLGATE_VLLM_URL); registers "vllm"
  --sglang-url URL      an SGLang server (env ROLLGATE_SGLANG_URL); registers "sglang"
  --engine-model NAME   "model" sent to vLLM (default: omitted)
  --engine-stream       ask vLLM to stream: agents see the answer while it is generated
  --engine-timeout-ms N per-attempt engine timeout (default ${DEFAULT_ENGINE_TIMEOUT_MS})
  --engine-retries N    retries before any response byte (default ${DEFAULT_ENGINE_RETRIES})

  ROLLGATE_ADMIN_TOKEN  when set, /api requires it and agents must use their rollout token
`;

function numberOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) {
    throw new Error(`${name} must be a positive integer, got ${value}`);
  }
  return n;
}

function countOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    throw new Error(`${name} must be an integer ≥ 0, got ${value}`);
  }
  return n;
}

export async function serve(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      "model-dir": { type: "string" },
      "context-length": { type: "string" },
      "max-body-bytes": { type: "string" },
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
      "split-special-tokens": { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const env = (k: string) => Deno.env.get(k) || undefined;
  const port = numberOption(values.port ?? env("ROLLGATE_PORT"), "--port") ?? 7860;
  const hostname = values.host ?? env("ROLLGATE_HOST") ?? "127.0.0.1";
  const model = await PolicyModel.load({
    dir: values["model-dir"] ?? env("ROLLGATE_MODEL_DIR"),
    contextLength: numberOption(values["context-length"], "--context-length"),
  });
  const engine = {
    timeoutMs: numberOption(values["engine-timeout-ms"], "--engine-timeout-ms"),
    retries: countOption(values["engine-retries"], "--engine-retries"),
  };
  const backends: Record<string, GenerationBackend> = {};
  const vllmUrl = values["vllm-url"] ?? env("ROLLGATE_VLLM_URL");
  const sglangUrl = values["sglang-url"] ?? env("ROLLGATE_SGLANG_URL");
  if (vllmUrl) {
    backends.vllm = new VllmBackend({
      url: vllmUrl,
      model: values["engine-model"],
      stream: values["engine-stream"],
      ...engine,
    });
  }
  if (sglangUrl) backends.sglang = new SglangBackend({ url: sglangUrl, ...engine });
  const upstreams = upstreamsFromFlags({
    anthropicUrl: values["upstream-anthropic-url"] ?? env("ROLLGATE_UPSTREAM_ANTHROPIC_URL"),
    openaiUrl: values["upstream-openai-url"] ?? env("ROLLGATE_UPSTREAM_OPENAI_URL"),
    model: values["upstream-model"],
    timeoutMs: engine.timeoutMs,
  });
  const defaultBackend = values.backend ?? env("ROLLGATE_BACKEND") ?? "gate";
  if (!["gate", "vllm", "sglang", "anthropic", "openai"].includes(defaultBackend)) {
    throw new Error(
      `--backend must be gate, vllm, sglang, anthropic or openai, got ${defaultBackend}`,
    );
  }
  if (!(defaultBackend === "gate" || backends[defaultBackend] || upstreams[defaultBackend])) {
    const flag = ["anthropic", "openai"].includes(defaultBackend)
      ? `upstream-${defaultBackend}`
      : defaultBackend;
    throw new Error(`--backend ${defaultBackend} needs --${flag}-url`);
  }
  const gw = createGateway({
    model,
    backends,
    upstreams,
    defaultBackend,
    adminToken: env("ROLLGATE_ADMIN_TOKEN"),
    maxBodyBytes: numberOption(
      values["max-body-bytes"] ?? env("ROLLGATE_MAX_BODY_BYTES"),
      "--max-body-bytes",
    ),
    publicUrl: values["public-url"] ?? env("ROLLGATE_PUBLIC_URL"),
    modelName: values["model-name"],
    splitSpecialTokens: values["split-special-tokens"],
  });
  Deno.serve({
    port,
    hostname,
    onListen: ({ hostname, port }) =>
      console.log(
        `rollgate listening on http://${hostname}:${port} (model ${model.files.dir}, tokenizer ${model.tokenizer.engine}, backend ${defaultBackend})`,
      ),
  }, gw.app.fetch);
}

if (import.meta.main) {
  const [verb = "serve", ...rest] = Deno.args;
  try {
    if (verb === "serve") await serve(rest);
    else if (verb === "inspect") await inspect(rest);
    else if (verb === "audit") Deno.exit(await audit(rest));
    else if (verb === "rollout") Deno.exit(await rolloutCommand(rest));
    else if (verb === "--help" || verb === "help") console.log(USAGE);
    else {
      console.error(`unknown verb ${verb}\n\n${USAGE}`);
      Deno.exit(2);
    }
  } catch (e) {
    console.error(`rollgate: ${(e as Error).message}`);
    Deno.exit(1);
  }
}
