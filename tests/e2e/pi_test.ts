/**
 * End to end with the real pi CLI (OpenAI Chat Completions). See `cli_scenario.ts`.
 *
 * @module
 */
import { pi } from "../../harness/mod.ts";
import { cliScenarioTest } from "./cli_scenario.ts";

cliScenarioTest(pi, { systemMarker: "operating inside pi, a coding agent harness" });
// The same run with the policy's tokens streamed to the CLI as they are sampled (`append`).
cliScenarioTest(pi, {
  systemMarker: "operating inside pi, a coding agent harness",
  appendChunk: 3,
});
