/**
 * End to end with the real Codex CLI (OpenAI Responses). See `cli_scenario.ts`.
 *
 * @module
 */
import { codex } from "../../harness/mod.ts";
import { cliScenarioTest } from "./cli_scenario.ts";

cliScenarioTest(codex, { systemMarker: "You are a coding agent running in the Codex CLI" });
// The same run with the policy's tokens streamed to the CLI as they are sampled (`append`).
cliScenarioTest(codex, {
  systemMarker: "You are a coding agent running in the Codex CLI",
  appendChunk: 3,
});
