/**
 * End to end with the real Gemini CLI (Google's `generateContent`). See `cli_scenario.ts`.
 *
 * @module
 */
import { geminiCli } from "../../harness/mod.ts";
import { cliScenarioTest } from "./cli_scenario.ts";

const systemMarker = "You are Gemini CLI, an autonomous CLI agent";
cliScenarioTest(geminiCli, { systemMarker });
// The same run with the policy's tokens streamed to the CLI as they are sampled (`append`).
cliScenarioTest(geminiCli, { systemMarker, appendChunk: 3 });
