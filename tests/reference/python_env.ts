/**
 * Test-only bridge to the Python reference environment (`.venv` at the repo root, set up from
 * `tests/reference/requirements.txt`), used to cross-check our chat-template rendering against
 * Hugging Face `transformers` (and, in `renderers_env.ts`, our model families against
 * `renderers`).
 *
 * Setup (once): `python3 -m venv .venv && .venv/bin/pip install -r tests/reference/requirements.txt`
 *
 * @module
 */

/** One conversation to render with `tokenizer.apply_chat_template`. */
export interface ReferenceCase {
  /** Chat messages, passed to the template verbatim. */
  messages: unknown[];
  /** Tool definitions, or `null`/omitted for none. */
  tools?: unknown[] | null;
  /** Whether to append the assistant generation prompt. */
  add_generation_prompt: boolean;
  /** Extra template variables, e.g. `{ enable_thinking: false }`. */
  kwargs?: Record<string, unknown>;
}

/** Result for one {@linkcode ReferenceCase}: `ids` + `text` on success, `error` otherwise. */
export interface ReferenceResult {
  /** Token ids of the rendered prompt (`tokenize=True`). */
  ids?: number[];
  /** Rendered prompt text (`tokenize=False`). */
  text?: string;
  /** `"ExceptionType: message"` when the input was malformed or the template raised. */
  error?: string;
}

/**
 * Filesystem path of a `file:` URL (POSIX). `node:url`'s `fileURLToPath` is avoided on purpose:
 * any `node:*` import needs `@types/node`, which this repo's `node_modules` does not provide.
 */
function toPath(url: URL): string {
  return decodeURIComponent(url.pathname);
}

const VENV_PYTHON = toPath(new URL("../../.venv/bin/python", import.meta.url));

/**
 * Absolute path of the reference interpreter `<repo root>/.venv/bin/python`, or `null` when the
 * venv has not been created. Requires read permission for that path.
 */
export function referencePython(): string | null {
  try {
    return Deno.statSync(VENV_PYTHON).isFile ? VENV_PYTHON : null;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

/**
 * Runs a reference script of this folder in the venv (or in `python`, another venv's
 * interpreter): one JSON line per input in, one per input out, in order. A failure to start or a
 * non-zero exit throws with the script's stderr.
 */
export async function runReferenceScript(
  script: string,
  args: string[],
  inputs: unknown[],
  python: string | null = referencePython(),
): Promise<unknown[]> {
  if (python === null) {
    throw new Error(
      "reference venv missing: python3 -m venv .venv && " +
        ".venv/bin/pip install -r tests/reference/requirements.txt",
    );
  }
  const child = new Deno.Command(python, {
    args: [toPath(new URL(`./${script}`, import.meta.url)), ...args],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // Collect output concurrently with writing, so large inputs cannot deadlock on full pipes.
  const output = child.output();
  const input = inputs.map((c) => JSON.stringify(c) + "\n").join("");
  const writer = child.stdin.getWriter();
  let writeError: unknown = null;
  try {
    await writer.write(new TextEncoder().encode(input));
    await writer.close();
  } catch (err) {
    // The process most likely died early (e.g. tokenizer failed to load); report its stderr.
    writeError = err;
    await writer.abort().catch(() => {});
  }
  const { code, stdout, stderr } = await output;
  const stderrText = new TextDecoder().decode(stderr).trim();
  if (code !== 0 || writeError !== null) {
    throw new Error(
      `${script} exited with ${code}: ${stderrText}`,
      writeError === null ? undefined : { cause: writeError },
    );
  }
  const lines = new TextDecoder().decode(stdout).split("\n").filter((l) => l.trim() !== "");
  if (lines.length !== inputs.length) {
    throw new Error(
      `expected ${inputs.length} result lines, got ${lines.length}; stderr: ${stderrText}`,
    );
  }
  return lines.map((l) => JSON.parse(l));
}

/**
 * Renders every case with `transformers` in a single Python process (the tokenizer in
 * `modelDir` — a directory holding `tokenizer.json` and `tokenizer_config.json` — is loaded
 * once, offline). Results are returned in input order.
 *
 * Per-case template errors are reported as `{ error }`; failure to start the reference
 * environment or to load the tokenizer throws.
 */
export async function renderWithTransformers(
  modelDir: string,
  cases: ReferenceCase[],
): Promise<ReferenceResult[]> {
  const inputs = cases.map((c) => ({
    messages: c.messages,
    tools: c.tools ?? null,
    add_generation_prompt: c.add_generation_prompt,
    kwargs: c.kwargs ?? {},
  }));
  return await runReferenceScript(
    "chat_template_reference.py",
    [modelDir],
    inputs,
  ) as ReferenceResult[];
}
