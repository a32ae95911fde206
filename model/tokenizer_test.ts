import assert from "node:assert/strict";
import { loadModelFiles } from "./model_files.ts";
import { loadTokenizer } from "./tokenizer.ts";

const files = await loadModelFiles();

Deno.test("tokenizer: Rust and JS engines load and agree on the reference vectors", async () => {
  const [rust, js] = await Promise.all([loadTokenizer(files, "rust"), loadTokenizer(files, "js")]);
  assert.equal(rust.engine, "rust");
  assert.equal(js.engine, "js");
  // Qwen3: 151,643 BPE ids + 26 added tokens.
  assert.equal(rust.vocabSize, 151669);
  assert.equal(js.vocabSize, rust.vocabSize);
  const chat = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n";
  for (const tok of [rust, js]) {
    assert.deepEqual(await tok.encode("Hello, world!"), [9707, 11, 1879, 0]);
    assert.deepEqual(await tok.encode(chat), [
      151644,
      872,
      198,
      6023,
      151645,
      198,
      151644,
      77091,
      198,
    ]);
    assert.deepEqual(await tok.encode(""), []);
    assert.equal(await tok.decode(await tok.encode(chat)), chat);
    assert.equal(await tok.decode([]), "");
  }
  const text = "<think>\nx\n</think>\n\n日本語 😶‍🌫️ e\u0301 <tool_call>\n{}\n</tool_call>";
  assert.deepEqual(await js.encode(text), await rust.encode(text));
});
