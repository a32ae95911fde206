/**
 * vLLM renders for the `engine` model family: every prompt through
 * `POST /v1/chat/completions/render` (the model's chat template and tokenizer, on the server),
 * every answer read back through `POST /v1/chat/completions/derender` (the server's tool-call and
 * reasoning parsers), whichever backend sampled the ids. The server is the vLLM that generates
 * (`--vllm-url`) or any other serving the same model, such as a GPU-less `vllm launch render`
 * (`--render-url`). Shapes: `vllm_render_wire.ts`.
 *
 * The server needs `--enable-scale-out` (a plain `vllm serve` answers the render API 403, and
 * says so); for tool calls and reasoning, `--enable-auto-tool-choice --tool-call-parser NAME`
 * and `--reasoning-parser NAME`. A conversation the server refuses (a template error, a prompt
 * past its context: 400) is an `Error` with its message, which the turn reports as a render
 * failure; an unreachable or misconfigured server is a `GenerationError` (retried as an engine's
 * failures are, then a 502).
 *
 * @module
 */
import type {
  EngineAnswer,
  EngineParseRequest,
  EngineRendering,
  EngineRenderRequest,
} from "../model/mod.ts";
import { EngineHttp, type EngineHttpOptions } from "./engine_http.ts";
import { derenderBody, derenderedAnswer, renderBody, renderedIds } from "./vllm_render_wire.ts";

export interface VllmRenderOptions extends EngineHttpOptions {
  /** The `model` field (the served model name); omitted when unset. */
  model?: string;
}

/** What a refusal of the conversation itself looks like to the reader of the answer. */
interface Refused {
  refused: number;
  message: string;
}

/** Statuses that refuse the conversation (bad input), not the setup. */
const REFUSALS = new Set([400, 422]);

export class VllmRender implements EngineRendering {
  readonly http: EngineHttp;
  readonly where: string;

  constructor(readonly options: VllmRenderOptions) {
    this.http = new EngineHttp("vLLM", options);
    this.where = `vLLM at ${this.http.url}`;
  }

  async render(request: EngineRenderRequest): Promise<number[]> {
    const path = "/v1/chat/completions/render";
    const json = await this.#post(path, renderBody(request, this.options.model));
    return renderedIds(json, `${this.where}${path}`);
  }

  async parse(request: EngineParseRequest): Promise<EngineAnswer> {
    const path = "/v1/chat/completions/derender";
    const json = await this.#post(path, derenderBody(request, this.options.model));
    return derenderedAnswer(json, `${this.where}${path}`);
  }

  async #post(path: string, body: unknown): Promise<unknown> {
    const { json } = await this.http.postJson(path, {
      body: () => body,
      answers: (status) => REFUSALS.has(status),
      read: async (res) =>
        res.ok ? await res.json() : { refused: res.status, message: await res.text() },
    });
    const refused = json as Refused | null;
    if (refused && typeof refused === "object" && "refused" in refused) {
      throw new Error(
        `${this.where}${path} refused the conversation (${refused.refused}): ${
          engineMessage(refused.message)
        }`,
      );
    }
    return json;
  }
}

/** vLLM's `{"error": {"message": …}}`, or the body as it came (shortened). */
function engineMessage(body: string): string {
  try {
    const message = JSON.parse(body)?.error?.message;
    if (typeof message === "string") return message;
  } catch { /* not JSON */ }
  return body.slice(0, 500);
}
