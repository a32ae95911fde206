/**
 * Llama 3.1 / 3.2 on Llama 3's real vocabulary with 3.1's added-token names (the named double of
 * `tests/support/llama3_model.ts`), detected from its template double, checked against `renderers`
 * `llama-3` over generated conversations (one call per turn, as the template takes; JSON markup in
 * arguments), with the tools in the first user turn (the default) and in the system turn.
 */
import { llama3ModelDir } from "../support/llama3_model.ts";
import { registerFamilyChecks } from "./family_check.ts";
import { llama3Form } from "./canonical_forms.ts";
import { HERMES_MARKUP } from "./markup.ts";

const dir = await llama3ModelDir();
const generator = { typedArguments: true, markup: HERMES_MARKUP, singleCall: true };

for (const [i, inUser] of [true, false].entries()) {
  registerFamilyChecks({
    label: "llama-3" + (inUser ? "" : " tools_in_user_message=false"),
    model: { dir, templateKwargs: { tools_in_user_message: inUser } },
    reference: { renderer: "llama-3", config: { tools_in_user_message: inUser } },
    generator,
    canonical: llama3Form,
    count: inUser ? 60 : 30,
    firstSeed: 94001 + 1000 * i,
  });
}
