/**
 * Every registered model family end to end with the three real CLIs (Claude Code: Anthropic
 * Messages; Codex: OpenAI Responses; pi: OpenAI Chat Completions): the gateway runs with the
 * family's model (`tests/support/family_models.ts`), the scripted policy writes the ids the
 * family's own renderer gives for the intended shell call and final answer (`renderAnswer`), the
 * CLI runs the call and finishes, and the sample has the loss mask exactly on the sampled ids
 * (`cli_scenario.ts`). A family registered later is covered without a change here (a family with
 * no test model fails, naming it). Qwen3, the default, runs the same scenario in
 * `claude_code_test.ts`, `codex_test.ts` and `pi_test.ts`.
 *
 * @module
 */
import { claudeCode, codex, type Harness, pi, tail } from "../../harness/mod.ts";
import { FAMILIES, GENERIC_FAMILY } from "../../model/mod.ts";
import { type GatewayProcess, startGateway } from "../support/gateway_process.ts";
import { familyTestModel } from "../support/family_models.ts";
import { cliMissing, skipGroup } from "../support/skips.ts";
import { within } from "../support/within.ts";
import { RUN_BUDGET_MS, runScenario } from "./cli_scenario.ts";

/** The three CLIs the issue names, with a distinctive substring of each one's system prompt. */
const CLIS: { h: Harness; systemMarker: string }[] = [
  { h: claudeCode, systemMarker: "Claude Agent SDK" },
  { h: codex, systemMarker: "You are a coding agent running in the Codex CLI" },
  { h: pi, systemMarker: "operating inside pi, a coding agent harness" },
];

const missing = CLIS.map(({ h }) => cliMissing(h)).find((m) => m !== undefined);

for (const family of [...FAMILIES, GENERIC_FAMILY]) {
  if (family.name === "qwen3") continue;
  Deno.test({
    name: `e2e family ${family.name}: ${CLIS.map(({ h }) => h.name).join(", ")} through the ` +
      "gate, the family's format, loss on the sampled ids" +
      (missing ? ` [skipped: ${missing}]` : ""),
    ignore: skipGroup(`e2e families (${family.name})`, missing),
    async fn(t) {
      const setup = await within(
        `${family.name}: its test model`,
        60_000,
        familyTestModel(family.name),
      );
      const gateway: GatewayProcess = await within(
        `${family.name}: the gateway`,
        60_000,
        startGateway(setup.serveArgs),
      );
      try {
        for (const { h, systemMarker } of CLIS) {
          // The CLI's own budget plus the gateway calls and checks around it.
          await t.step(h.name, () =>
            within(
              `${family.name} with ${h.name}`,
              RUN_BUDGET_MS + 60_000,
              runScenario(h, { systemMarker, family: setup, gateway }),
              () => tail(gateway.output()),
            ));
        }
      } finally {
        await within(`${family.name}: the gateway's exit`, 30_000, gateway.stop());
      }
    },
  });
}
