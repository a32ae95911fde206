/**
 * End to end with the real Claude Code CLI (Anthropic Messages). See `cli_scenario.ts`.
 *
 * @module
 */
import { claudeCode } from "../../harness/mod.ts";
import { cliScenarioTest } from "./cli_scenario.ts";

cliScenarioTest(claudeCode, { systemMarker: "Claude Agent SDK" });
// The same run with the policy's tokens streamed to the CLI as they are sampled (`append`).
cliScenarioTest(claudeCode, { systemMarker: "Claude Agent SDK", appendChunk: 3 });
