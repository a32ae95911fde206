/**
 * End to end with the real mini-swe-agent CLI (OpenAI Chat Completions, text actions and no tools). See `cli_scenario.ts`.
 *
 * @module
 */
import { miniSweAgent } from "../../harness/mod.ts";
import { cliScenarioTest } from "./cli_scenario.ts";

const systemMarker = "Your response must contain exactly ONE bash code block";
cliScenarioTest(miniSweAgent, { systemMarker });
// The same run with the policy's tokens streamed to the CLI as they are sampled (`append`).
cliScenarioTest(miniSweAgent, { systemMarker, appendChunk: 3 });
