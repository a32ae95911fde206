/**
 * rollgate command line.
 *
 *     deno run -A main.ts serve [--port 7860] [--host 127.0.0.1] [--model-dir DIR]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { PolicyModel } from "./model/mod.ts";
import { createGateway } from "./gateway/mod.ts";

const USAGE = `usage: main.ts serve [options]

  --port N              port (env ROLLGATE_PORT, default 7860)
  --host H              address (env ROLLGATE_HOST, default 127.0.0.1)
  --model-dir DIR       directory with tokenizer.json + tokenizer_config.json
                        (env ROLLGATE_MODEL_DIR, default: bundled Qwen3)
  --context-length N    context window in tokens (default: the config's model_max_length)
  --max-body-bytes N    request body cap (env ROLLGATE_MAX_BODY_BYTES, default 64 MiB)
  --public-url URL      base URL agents reach this gateway at (env ROLLGATE_PUBLIC_URL)
  --model-name NAME     model id reported by /v1/models (default rollgate-policy)

  ROLLGATE_ADMIN_TOKEN  when set, /api requires it and agents must use their rollout token
`;

function numberOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got ${value}`);
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
  const gw = createGateway({
    model,
    adminToken: env("ROLLGATE_ADMIN_TOKEN"),
    maxBodyBytes: numberOption(values["max-body-bytes"] ?? env("ROLLGATE_MAX_BODY_BYTES"), "--max-body-bytes"),
    publicUrl: values["public-url"] ?? env("ROLLGATE_PUBLIC_URL"),
    modelName: values["model-name"],
  });
  Deno.serve({
    port,
    hostname,
    onListen: ({ hostname, port }) =>
      console.log(`rollgate listening on http://${hostname}:${port} (model ${model.files.dir}, tokenizer ${model.tokenizer.engine})`),
  }, gw.app.fetch);
}

if (import.meta.main) {
  const [verb = "serve", ...rest] = Deno.args;
  try {
    if (verb === "serve") await serve(rest);
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
