/**
 * The command line's usage text (`main.ts --help`, `main.ts serve --help`); `rollout --help`
 * has its own (`cli/rollout.ts`).
 *
 * @module
 */
import { DEFAULT_ENGINE_RETRIES, DEFAULT_ENGINE_TIMEOUT_MS } from "../generation/mod.ts";
import { ENGINE_FAMILY, FAMILIES, GENERIC_FAMILY, TOOL_PARSERS } from "../model/mod.ts";
import { SERVE_BACKENDS } from "./serve_flags.ts";

const FAMILY_NAMES = [...FAMILIES, GENERIC_FAMILY, ENGINE_FAMILY].map((f) => f.name).join(" | ");
const PARSER_NAMES = TOOL_PARSERS.map((p) => p.name).join(" | ");

export const USAGE = `usage: main.ts serve [options]
       main.ts inspect <rollout id | tree file> [--gateway URL] [--json]
       main.ts audit <rollout id | tree file> [--gateway URL] [--json] [model flags as serve]
       main.ts view <tree file | results.jsonl | rollout id>… [--port N] [--export OUT.html]
                    (see view --help; a running gateway serves the same pages at /ui)
       main.ts rollout --tasks <dir|jsonl> --harness NAME [--sandbox local|e2b|docker] [--samples K]
                       [--concurrency N] [--policy gate|gold|noop] [--out results.jsonl]
                       [--gateway-port P] [--time-budget S] [--model NAME]
                       [model flags as serve]   (see rollout --help)
       main.ts agent --harness NAME --gateway URL --rollout ID --token TOKEN --workdir DIR
                     --prompt TEXT   (one agent CLI run against an existing rollout; agent --help)
       main.ts <verb> --help   (each verb's own flags)

  --port N              port (env ROLLGATE_PORT, default 7860)
  --host H              address (env ROLLGATE_HOST, default 127.0.0.1)
  --model-dir DIR       directory with tokenizer.json + tokenizer_config.json
                        (env ROLLGATE_MODEL_DIR, default: bundled Qwen3)
  --model-family NAME   ${FAMILY_NAMES} (env ROLLGATE_MODEL_FAMILY,
                        default: detected from the model directory's chat template)
  --render-url URL      --model-family engine: the vLLM server (started with --enable-scale-out)
                        that renders every prompt and parses every answer (env ROLLGATE_RENDER_URL,
                        default --vllm-url); --model-dir must hold the served model's tokenizer
  --tool-parser NAME    output parser of the generic family: ${PARSER_NAMES}
                        (env ROLLGATE_TOOL_PARSER, default none: tool-call markup is counted as
                        malformed and answered as text)
  --template-kwargs JSON  template variables, e.g. '{"enable_thinking": false}'
                        (env ROLLGATE_TEMPLATE_KWARGS; rollouts may set their own with template)
  --context-length N    context window in tokens (default: the config's model_max_length)
  --max-body-bytes N    request body cap (env ROLLGATE_MAX_BODY_BYTES, default 64 MiB)
  --public-url URL      base URL agents reach this gateway at (env ROLLGATE_PUBLIC_URL)
  --model-name NAME     model id reported by /v1/models (default rollgate-policy)
  --data-dir DIR        the journal: what a restart restores (env ROLLGATE_DATA_DIR,
                        default ./rollgate-data; one gateway per directory)
  --no-journal          keep nothing on disk (a throwaway gateway)
  --database-url URL    replicas: the journal in a shared PostgreSQL instead
                        (env ROLLGATE_DATABASE_URL; excludes --data-dir and --no-journal)
  --advertise-url URL   how the other replicas reach this one (env ROLLGATE_ADVERTISE_URL,
                        default http://<host>:<port>)
  --owner-lease S       a replica's hold on its rollouts, renewed every third of it
                        (env ROLLGATE_OWNER_LEASE, default 10)
  --split-special-tokens  tokenize special-token text in message content as plain text
                        (rollouts may override with split_special_tokens; default off)
  --access-log          one line per request on stdout (env ROLLGATE_ACCESS_LOG=1)
  --drain-grace S       on SIGTERM, seconds for in-flight turns to finish (env ROLLGATE_DRAIN_GRACE,
                        default 30)
  --pid-file FILE       write the gateway's process id here once the port is bound (removed on
                        exit): kill $(cat FILE) stops it

  limits (counts, bytes) and timeouts (seconds; docs/operations.md "Limits and timeouts"):
  --max-trainer-body-bytes N (16 MiB)   --max-tool-body-bytes N (4 MiB)
  --max-tool-bytes-per-rollout N (32 MiB)   --max-history-messages N (20000)
  --max-pending-per-rollout N (64)   --max-pending N (4096)
  --turn-timeout S (600)   --abandon-grace S (10)   --rollout-idle-timeout S (3600)
  --ack-timeout S (10)   --lease S (60)   --max-lease S (3600)
  --header-timeout S (30)   --body-timeout S (30)   --body-deadline S (120)   --idle-timeout S (120)
  --max-connections N (8192)   --max-connections-per-address N (2048)
  --trusted-proxies LIST   your balancer's addresses (10.0.0.2,10.0.1.0/24; env
                        ROLLGATE_TRUSTED_PROXIES): clients behind it are capped by X-Forwarded-For

  --backend NAME        ${SERVE_BACKENDS.join(" | ")}: who generates for rollouts
                        that name no backend (anthropic/openai: black-box, message-level record)
                        (env ROLLGATE_BACKEND, default gate: the trainer answers via /api)
  --upstream-anthropic-url URL   an Anthropic Messages API for black-box rollouts, without /v1
                        (https://api.anthropic.com; env ROLLGATE_UPSTREAM_ANTHROPIC_URL;
                        key: ANTHROPIC_API_KEY)
  --upstream-openai-url URL      an OpenAI API for black-box rollouts, with /v1
                        (https://api.openai.com/v1, http://127.0.0.1:8000/v1;
                        env ROLLGATE_UPSTREAM_OPENAI_URL; key: OPENAI_API_KEY)
  --upstream-model NAME          model id sent upstream instead of the agent's
  --vllm-url URL        a vLLM OpenAI-compatible server (env ROLLGATE_VLLM_URL); registers "vllm"
  --sglang-url URL      an SGLang server (env ROLLGATE_SGLANG_URL); registers "sglang"
  --engine-model NAME   "model" sent to vLLM (default: omitted)
  --engine-stream       ask vLLM to stream: agents see the answer while it is generated
  --vllm-api auto|generate|completions  vLLM endpoint: auto (default) uses the RL API
                        /inference/v1/generate when the server has it (--enable-scale-out),
                        else /v1/completions
  --sglang-routed-experts LxKxE  MoE routing replay from SGLang (started with
                        --enable-return-routed-experts): L layers, top-K, E experts
  --logprobs-mode raw|processed  how the engines compute logprobs (recorded per turn; default raw)
  --max-staleness N     turns more than N weight versions old at finish are not trained
  --teacher NAME=URL[#MODEL]  a teacher for on-policy distillation: a vLLM-compatible server
                        scoring the student's sampled ids (prompt_logprobs); NAME=trainer: the
                        trainer scores them through /api/teacher/requests; repeat for several;
                        rollouts choose one with teacher (docs/distillation.md)
  --teacher-url URL     the teacher named default, which rollouts naming none get
                        (env ROLLGATE_TEACHER_URL); --teacher-model NAME its "model"
  --default-teacher NAME  the teacher rollouts naming none get (default: none, or default)
  --teacher-concurrency N  scorings sent to one vLLM teacher at once (default 2)
  --engine-timeout-ms N per-attempt engine timeout (default ${DEFAULT_ENGINE_TIMEOUT_MS})
  --engine-retries N    retries before any response byte (default ${DEFAULT_ENGINE_RETRIES})

  ROLLGATE_ADMIN_TOKEN  when set, /api, /metrics and the viewer (/ui) require it, and agents must
                        use their rollout token; required (16+ characters) off loopback
`;
