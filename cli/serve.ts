/**
 * The `serve` verb (the default): the gateway on a TCP port, with the generation backends and
 * black-box upstreams its flags and environment name.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { createGateway, upstreamsFromFlags } from "../gateway/mod.ts";
import { type GenerationBackend, SglangBackend, VllmBackend } from "../generation/mod.ts";
import { PolicyModel } from "../model/mod.ts";
import { COUNT, integerFlag, POSITIVE } from "./flags.ts";
import { MODEL_FLAGS, modelOptions } from "./model_flags.ts";
import { USAGE } from "./usage.ts";
import { UsageError } from "./usage_error.ts";

/** Runs `main.ts serve <args>`: loads the model and serves until the process ends. */
export async function serve(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      ...MODEL_FLAGS,
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
  const port = integerFlag(values.port ?? env("ROLLGATE_PORT"), "--port", POSITIVE) ?? 7860;
  const hostname = values.host ?? env("ROLLGATE_HOST") ?? "127.0.0.1";
  const model = await PolicyModel.load({
    ...modelOptions(values),
    contextLength: integerFlag(values["context-length"], "--context-length", POSITIVE),
  });
  const engine = {
    timeoutMs: integerFlag(values["engine-timeout-ms"], "--engine-timeout-ms", POSITIVE),
    retries: integerFlag(values["engine-retries"], "--engine-retries", COUNT),
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
    throw new UsageError(
      `--backend must be gate, vllm, sglang, anthropic or openai, got ${defaultBackend}`,
    );
  }
  if (!(defaultBackend === "gate" || backends[defaultBackend] || upstreams[defaultBackend])) {
    const flag = ["anthropic", "openai"].includes(defaultBackend)
      ? `upstream-${defaultBackend}`
      : defaultBackend;
    throw new UsageError(`--backend ${defaultBackend} needs --${flag}-url`);
  }
  const gw = createGateway({
    model,
    backends,
    upstreams,
    defaultBackend,
    adminToken: env("ROLLGATE_ADMIN_TOKEN"),
    maxBodyBytes: integerFlag(
      values["max-body-bytes"] ?? env("ROLLGATE_MAX_BODY_BYTES"),
      "--max-body-bytes",
      POSITIVE,
    ),
    publicUrl: values["public-url"] ?? env("ROLLGATE_PUBLIC_URL"),
    modelName: values["model-name"],
    splitSpecialTokens: values["split-special-tokens"],
  });
  Deno.serve({
    port,
    hostname,
    onListen: ({ hostname, port }) => {
      console.log(
        `rollgate listening on http://${hostname}:${port} (model ${model.files.dir}, family ` +
          `${model.family}, tokenizer ${model.tokenizer.engine}, backend ${defaultBackend})`,
      );
      for (const note of model.format.notes ?? []) console.log(`rollgate: ${note}`);
    },
  }, gw.app.fetch);
}
