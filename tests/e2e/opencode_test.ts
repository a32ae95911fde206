/**
 * End to end with the real OpenCode CLI (OpenAI Chat Completions through @ai-sdk/openai-compatible). See `cli_scenario.ts`.
 *
 * @module
 */
import { opencode } from "../../harness/mod.ts";
import { cliScenarioTest } from "./cli_scenario.ts";

const systemMarker = "You are opencode, an interactive CLI tool";
cliScenarioTest(opencode, { systemMarker });
// The same run with the policy's tokens streamed to the CLI as they are sampled (`append`).
cliScenarioTest(opencode, { systemMarker, appendChunk: 3 });
