/**
 * What the drift check costs per turn, by family: `renderAnswer` (the answer as the template
 * writes it, compared with the sampled ids) and `renderAnswerInPlace` (whether a full render
 * also writes the generation prompt before it otherwise: an empty think block tokenized across
 * it), for an answer with reasoning and a call (~1,500 ids), and for one with empty reasoning
 * (where the in-place check finds a difference and encodes the whole answer).
 *
 *     deno bench -A bench/drift_check_bench.ts
 *
 * @module
 */
import type { AssistantMessage } from "../canonical/mod.ts";
import { familyTestModel } from "../tests/support/family_models.ts";

const reasoning = "Let me look at the failing test and the module it imports. ".repeat(60);
const call: AssistantMessage = {
  role: "assistant",
  content: "",
  reasoning_content: reasoning,
  tool_calls: [{
    id: "call_1",
    name: "bash",
    arguments: JSON.stringify({ command: "grep -rn 'def parse' src/ | head -50\n".repeat(20) }),
  }],
};
const empty: AssistantMessage = { ...call, reasoning_content: "" };

for (const family of ["qwen3", "qwen3.5", "glm-5"]) {
  const { model } = await familyTestModel(family);
  for (
    const [label, message] of [["reasoning + call", call], ["empty reasoning", empty]] as const
  ) {
    Deno.bench(`${family}, ${label}: renderAnswer`, { group: `${family} ${label}` }, async () => {
      await model.renderAnswerIds(message);
    });
    Deno.bench(
      `${family}, ${label}: renderAnswerInPlace`,
      { group: `${family} ${label}` },
      async () => {
        await model.renderAnswerInPlace(message);
      },
    );
  }
}
