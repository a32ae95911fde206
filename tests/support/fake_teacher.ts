/**
 * TEST DOUBLE at the teacher boundary: a fake vLLM OpenAI-compatible server that answers
 * `POST /v1/completions` with `prompt_logprobs` in vLLM 0.32's exact shape (`null` first, then
 * `{"<id>": {logprob, rank, decoded_token}}` per position, as in
 * `generation/__fixtures__/vllm_prompt_logprobs.json`, recorded from the real CPU build), real
 * HTTP on 127.0.0.1. It refuses a body the real server would not take for scoring (a prompt that
 * is not ids, no `prompt_logprobs`), logs every request, and its logprobs are a formula of
 * position and id ({@link teacherLogprob}), so a score read at the wrong position shows.
 * `down` makes it answer 503 (an outage); `hold` parks answers until `release()`.
 *
 * @module
 */

/** The double's logprob of `id` at position `p` (given what comes before). */
export function teacherLogprob(p: number, id: number): number {
  return -0.5 - ((id * 7 + p * 13) % 97) / 10;
}

export class FakeTeacher {
  readonly requests: { prompt: number[]; body: Record<string, unknown> }[] = [];
  /** While true, every request is answered 503 (the teacher is down). */
  down = false;
  /** While true, answers wait for `release()`. */
  hold = false;
  #held: (() => void)[] = [];
  #server: Deno.HttpServer<Deno.NetAddr>;
  readonly url: string;

  constructor() {
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      (req) => this.#handle(req),
    );
    this.url = `http://127.0.0.1:${this.#server.addr.port}`;
  }

  async #handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    if (req.method !== "POST" || url.pathname !== "/v1/completions") {
      return Response.json({ detail: "Not Found" }, { status: 404 });
    }
    const body = await req.json();
    const prompt = body.prompt;
    if (
      !Array.isArray(prompt) || !prompt.every((t) => Number.isInteger(t) && t >= 0) ||
      body.prompt_logprobs !== 0 || body.max_tokens !== 1
    ) {
      return Response.json({ error: { message: "not a scoring request" } }, { status: 400 });
    }
    this.requests.push({ prompt, body });
    if (this.down) return Response.json({ error: { message: "down" } }, { status: 503 });
    if (this.hold) await new Promise<void>((resolve) => this.#held.push(resolve));
    return Response.json({
      id: "cmpl-fake",
      object: "text_completion",
      created: 0,
      model: body.model ?? "teacher",
      choices: [{
        index: 0,
        text: "",
        logprobs: null,
        finish_reason: "length",
        stop_reason: null,
        token_ids: null,
        prompt_logprobs: prompt.map((id: number, p: number) =>
          p === 0 ? null : {
            [String(id)]: { logprob: teacherLogprob(p, id), rank: 1, decoded_token: "x" },
          }
        ),
      }],
    });
  }

  /** Lets every held answer go. */
  release(): void {
    this.hold = false;
    for (const go of this.#held.splice(0)) go();
  }

  async close(): Promise<void> {
    this.release();
    await this.#server.shutdown();
  }
}
