/**
 * Text ⇄ token ids with the model's real `tokenizer.json`.
 *
 * The Hugging Face Rust core (`tokenizers`, a napi binding) is the default: its encode runs on
 * libuv threads, off the event loop, and it is by construction what Python's `tokenizers` does.
 * `@huggingface/tokenizers` (pure TypeScript) is the fallback when the native binding cannot
 * load; both give identical ids on Qwen3 (see `tests/tokenizer_test.ts`).
 *
 * @module
 */
import { Tokenizer as RustTokenizer } from "tokenizers";
import { Tokenizer as JsTokenizer } from "@huggingface/tokenizers";
import type { ModelFiles } from "./model_files.ts";
import { NATIVE_ENCODES } from "./encode_lane.ts";
import { NativeMemoryTrim } from "./native_memory.ts";

/** An added token: matched in text before the vocabulary, as one id. */
export interface AddedToken {
  id: number;
  /** Marked special (`<|im_end|>`); non-special added tokens are e.g. Qwen3's `<think>`. */
  special: boolean;
}

export interface TextTokenizer {
  /** Which implementation is in use. */
  readonly engine: "rust" | "js";
  /** Ids of `text` without any added BOS/EOS (templates place special tokens themselves). */
  encode(text: string): Promise<number[]>;
  /** Number of ids, added tokens included. */
  readonly vocabSize: number;
  /** Text of `ids`, special tokens kept. */
  decode(ids: number[]): Promise<string>;
  /** The added tokens, by text. */
  readonly addedTokens: ReadonlyMap<string, AddedToken>;
  /** The same vocabulary without its added tokens (their text is ordinary text), loaded once. */
  withoutAddedTokens(): Promise<Pick<TextTokenizer, "encode">>;
}

/** What both implementations share: the added tokens and the vocabulary-only tokenizer. */
abstract class ModelTokenizer {
  abstract readonly engine: "rust" | "js";
  readonly addedTokens: ReadonlyMap<string, AddedToken>;
  #withoutAdded?: Promise<TextTokenizer>;
  constructor(readonly files: ModelFiles) {
    this.addedTokens = new Map(
      Object.entries(files.config.added_tokens_decoder ?? {}).map(([id, t]) => [
        t.content,
        { id: Number(id), special: t.special === true },
      ]),
    );
  }
  withoutAddedTokens(): Promise<TextTokenizer> {
    return this.#withoutAdded ??= loadTokenizer(this.files, this.engine, {
      withoutAddedTokens: true,
    });
  }
}

class RustTextTokenizer extends ModelTokenizer implements TextTokenizer {
  readonly engine = "rust";
  readonly vocabSize: number;
  readonly #freed = NativeMemoryTrim.shared();
  constructor(private readonly tok: RustTokenizer, files: ModelFiles) {
    super(files);
    this.vocabSize = tok.getVocabSize(true);
  }
  async encode(text: string): Promise<number[]> {
    if (text === "") return [];
    const ids = await NATIVE_ENCODES.run(async () => {
      const enc = await this.tok.encode(text, null, { addSpecialTokens: false });
      return enc.getIds();
    });
    const trim = this.#freed.afterEncoding(text.length);
    if (trim) await trim;
    return ids;
  }
  decode(ids: number[]): Promise<string> {
    return ids.length === 0 ? Promise.resolve("") : this.tok.decode(ids, false);
  }
}

class JsTextTokenizer extends ModelTokenizer implements TextTokenizer {
  readonly engine = "js";
  readonly vocabSize: number;
  constructor(private readonly tok: JsTokenizer, vocabSize: number, files: ModelFiles) {
    super(files);
    this.vocabSize = vocabSize;
  }
  encode(text: string): Promise<number[]> {
    return Promise.resolve(
      text === "" ? [] : this.tok.encode(text, { add_special_tokens: false }).ids,
    );
  }
  decode(ids: number[]): Promise<string> {
    // The JS tokenizer throws on an empty array (the Rust one returns "").
    if (ids.length === 0) return Promise.resolve("");
    return Promise.resolve(
      this.tok.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false }),
    );
  }
}

export interface LoadTokenizerOptions {
  /**
   * The model's vocabulary alone, without the added tokens: `<|im_end|>` or `<think>` in the
   * text is tokenized like any other string instead of becoming its added id. (The Rust core
   * renumbers added tokens when some are removed, so all go; `SpecialText` splits out the ones
   * that should stay.) Decoding added ids is not supported.
   */
  withoutAddedTokens?: boolean;
}

/**
 * Loads the tokenizer; `engine: "auto"` tries Rust and falls back to TypeScript.
 *
 * @example
 * ```ts
 * import { loadModelFiles, loadTokenizer } from "./mod.ts";
 *
 * const tok = await loadTokenizer(await loadModelFiles());
 * await tok.encode("Hello, world!"); // [9707, 11, 1879, 0]
 * const plain = await loadTokenizer(await loadModelFiles(), "auto", { withoutAddedTokens: true });
 * (await plain.encode("<|im_end|>")).length > 1; // true
 * ```
 */
export async function loadTokenizer(
  files: ModelFiles,
  engine: "auto" | "rust" | "js" = "auto",
  options: LoadTokenizerOptions = {},
): Promise<TextTokenizer> {
  const text = options.withoutAddedTokens
    ? withoutAddedTokens(await Deno.readTextFile(files.tokenizerPath))
    : null;
  if (engine !== "js") {
    try {
      return new RustTextTokenizer(
        text === null
          ? RustTokenizer.fromFile(files.tokenizerPath)
          : RustTokenizer.fromString(text),
        files,
      );
    } catch (e) {
      if (engine === "rust") throw e;
      console.warn(`rollgate: native tokenizer unavailable (${(e as Error).message}); using JS`);
    }
  }
  const json = JSON.parse(text ?? await Deno.readTextFile(files.tokenizerPath));
  // No `Math.max(...ids)`: spreading ~150k arguments overflows the stack.
  let maxId = -1;
  const vocab = json.model.vocab as Record<string, number>;
  for (const id of Object.values(vocab)) maxId = Math.max(maxId, id);
  for (const t of json.added_tokens as { id: number }[]) maxId = Math.max(maxId, t.id);
  return new JsTextTokenizer(new JsTokenizer(json, files.config), maxId + 1, files);
}

/** `tokenizer.json` text without its added tokens (so their text is plain text). */
function withoutAddedTokens(text: string): string {
  const json = JSON.parse(text);
  json.added_tokens = [];
  return JSON.stringify(json);
}
