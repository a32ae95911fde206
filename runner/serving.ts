/**
 * The backend a run names (`--backend`), checked before any rollout starts: its URL given and in
 * the form its client expects, the server reachable, the upstream speaking the harness's protocol.
 * What it returns is handed to the run's gateway.
 *
 * @module
 */
import { checkUpstream, type Upstream, upstreamsFromFlags } from "../gateway/mod.ts";
import { type GenerationBackend, VllmBackend } from "../generation/mod.ts";
import type { Harness } from "../harness/mod.ts";
import { type BackendName, type RolloutRunOptions, RunnerError } from "./options.ts";

/** What serves the agents' completions besides the gate, checked before any rollout. */
export interface Serving {
  backends: Record<string, GenerationBackend>;
  upstreams: Record<string, Upstream>;
  /** For the start line: `policy gold`, `backend vllm at http://…`. */
  describe: string;
}

/** How long the start-up probe of a vLLM server may take. */
const ENGINE_PROBE_MS = 10_000;

/** The backend `o` names, checked: its URL given and in form, reachable, speaking `h`'s protocol. */
export async function serving(
  o: RolloutRunOptions,
  backend: BackendName,
  h: Harness,
  log: (text: string) => void,
): Promise<Serving> {
  if (backend === "gate") {
    return { backends: {}, upstreams: {}, describe: `backend gate, policy ${o.policy}` };
  }
  if (backend === "vllm") {
    const url = o.vllmUrl;
    if (!url) throw new RunnerError("--backend vllm needs --vllm-url (the vLLM server's URL)");
    // Any HTTP answer shows a server there; a refused connection would fail every turn.
    try {
      const res = await fetch(`${url.replace(/\/+$/, "")}/v1/models`, {
        signal: AbortSignal.timeout(ENGINE_PROBE_MS),
      });
      await res.body?.cancel();
    } catch (err) {
      throw new RunnerError(`--vllm-url ${url}: no server answers: ${(err as Error).message}`);
    }
    return {
      backends: { vllm: new VllmBackend({ url, model: o.engineModel }) },
      upstreams: {},
      describe: `backend vllm at ${url}`,
    };
  }
  const flag = `--upstream-${backend}-url`;
  if (!o.upstreamUrl) {
    throw new RunnerError(`--backend ${backend} needs ${flag} (the hosted API's base URL)`);
  }
  try {
    for (const warning of checkUpstream(backend, o.upstreamUrl, flag)) {
      log(`rollgate rollout: warning: ${warning}\n`);
    }
  } catch (err) {
    throw new RunnerError((err as Error).message);
  }
  const upstreams = upstreamsFromFlags({
    [backend === "anthropic" ? "anthropicUrl" : "openaiUrl"]: o.upstreamUrl,
    model: o.upstreamModel,
  });
  const upstream = upstreams[backend];
  if (!upstream.protocols.includes(h.protocol)) {
    // No hosted-API backend relays Gemini's protocol.
    const choose = h.protocol === "gemini"
      ? "no hosted-API backend serves it (use gate or vllm)"
      : `choose ${h.protocol === "anthropic" ? "anthropic" : "openai"}`;
    throw new RunnerError(
      `--backend ${backend} serves ${upstream.protocols.join(" and ")} requests; ${h.name} ` +
        `speaks ${h.protocol}: ${choose}`,
    );
  }
  return {
    backends: {},
    upstreams,
    describe: `backend ${backend} at ${o.upstreamUrl} (black-box: message-level samples)`,
  };
}
