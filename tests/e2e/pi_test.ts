/**
 * End to end with the real pi CLI (OpenAI Chat Completions). See `cli_scenario.ts`.
 *
 * @module
 */
import { pi } from "../../harness/mod.ts";
import { cliScenarioTest } from "./cli_scenario.ts";

cliScenarioTest(pi, { systemMarker: "operating inside pi, a coding agent harness" });
