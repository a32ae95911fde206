/**
 * End to end with the real Qwen Code CLI (OpenAI Chat Completions). See `cli_scenario.ts`.
 *
 * @module
 */
import { qwenCode } from "../../harness/mod.ts";
import { cliScenarioTest } from "./cli_scenario.ts";

const systemMarker = "You are Qwen Code, a non-interactive CLI agent";
cliScenarioTest(qwenCode, { systemMarker });
// The same run with the policy's tokens streamed to the CLI as they are sampled (`append`).
cliScenarioTest(qwenCode, { systemMarker, appendChunk: 3 });
