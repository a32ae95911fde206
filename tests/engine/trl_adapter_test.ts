/**
 * The TRL adapter (`clients/python/rollgate_client/adapters/trl.py`) against the real `trl` of the
 * engine venv: its Python tests (`clients/python/tests/test_trl_adapter.py`, a `GRPOTrainer`
 * training step over agent rollouts through a real gateway) run with `.venv-engine`'s
 * interpreter, which the standard-library runs of the Python suite do not have.
 *
 * @module
 */
import assert from "node:assert/strict";
import { skipGroup } from "../support/skips.ts";
import { ENGINE_PYTHON, engineMissing } from "../support/vllm_server.ts";
import { ENGINE_GROUP } from "./agent_model.ts";

const CLIENT_DIR = decodeURIComponent(new URL("../../clients/python/", import.meta.url).pathname);
const missing = engineMissing();

Deno.test({
  name: `${ENGINE_GROUP}: the TRL adapter in a real GRPOTrainer step` +
    (missing ? ` [skipped: ${missing}]` : ""),
  ignore: skipGroup(ENGINE_GROUP, missing),
  async fn() {
    const out = await new Deno.Command(ENGINE_PYTHON, {
      args: ["-m", "unittest", "-v", "tests.test_trl_adapter"],
      cwd: CLIENT_DIR,
      env: { TRL_EXPERIMENTAL_SILENCE: "1", OMP_NUM_THREADS: "2", HF_HUB_OFFLINE: "1" },
      stdin: "null",
      signal: AbortSignal.timeout(900_000),
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    assert.ok(out.success, text);
    assert.match(text, /Ran 6 tests/);
    assert.doesNotMatch(text, /skipped/i, "every test ran");
  },
});
