/**
 * MiniMax M2 on a tokenizer double (the Qwen3 vocabulary plus MiniMax's special tokens,
 * `tests/support/tokenizer_doubles.ts`: no package ships MiniMax's tokenizer), checked against
 * `renderers` (`minimax-m2`) over generated conversations with the format's hard cases: values
 * holding `</parameter>`, `</invoke>` and the block markers, booleans, floats, nested objects,
 * unicode, parallel calls. The reference renders the M2.5 identity by default; the template
 * double names the same one.
 */
import assert from "node:assert/strict";
import type { AssistantMessage, Message, ToolSpec } from "../../canonical/mod.ts";
import { PolicyModel } from "../../model/mod.ts";
import { MiniMaxM2TextRenderer } from "../../model/families/minimax_m2/mod.ts";
import { renderRequest, type RenderResult, withRenderers } from "../reference/renderers_env.ts";
import { referenceMissing, skipGroup } from "../support/skips.ts";
import { cliToolLists } from "./cli_tool_lists.ts";
import { tokenizerDoubleDir } from "../support/tokenizer_doubles.ts";
import { registerFamilyChecks } from "./family_check.ts";
import { MINIMAX_M2_MARKUP } from "./markup.ts";

const DIR = await tokenizerDoubleDir("minimax-m2");
globalThis.addEventListener("unload", () => Deno.removeSync(DIR, { recursive: true }));

const IDENTITY = "You are a helpful assistant. Your name is MiniMax-M2.5 and is built by MiniMax.";

/**
 * What the policy's answer parses back to: the prompt opened `<think>\n`, so there is always
 * reasoning (empty too), trimmed of newlines, and the content starts after `</think>\n\n`.
 */
function minimaxForm(m: AssistantMessage): AssistantMessage {
  return {
    ...m,
    content: m.content.replace(/^\n+/, ""),
    reasoning_content: (m.reasoning_content ?? "").replace(/^\n+|\n+$/g, ""),
  };
}

/** The model's template (and `renderers`' full render) drops a system message after the first. */
function withoutLaterSystem(messages: readonly Message[]): Message[] {
  return messages.filter((m, i) =>
    m.role !== "system" || messages.slice(0, i).every((x) => x.role === "system")
  );
}

for (
  const [label, kwargs, identity, seed] of [
    ["minimax-m2", {}, IDENTITY, 60001],
    [
      "minimax-m2 M2.7 identity",
      { model_identity: "You are MiniMax-M2.7." },
      "You are MiniMax-M2.7.",
      61001,
    ],
  ] as const
) {
  const text = new MiniMaxM2TextRenderer(identity);
  registerFamilyChecks({
    label,
    model: { dir: DIR, family: "minimax-m2", templateKwargs: kwargs },
    reference: {
      renderer: "minimax-m2",
      config: { model_identity: identity },
      deviation: {
        what: "the template drops a system message after the first; rollgate renders it in place",
        text: (messages: readonly Message[], tools: readonly ToolSpec[], prompt: boolean) =>
          text.render(withoutLaterSystem(messages), tools, { addGenerationPrompt: prompt }),
      },
    },
    generator: { typedArguments: true, markup: MINIMAX_M2_MARKUP },
    canonical: minimaxForm,
    count: label === "minimax-m2" ? 100 : 30,
    firstSeed: seed,
  });
}

Deno.test({
  name: "minimax-m2: the real CLIs' tool lists rendered as renderers renders them, id for id",
  ignore: skipGroup("renderers cross-check (minimax-m2 CLI tools)", referenceMissing()),
  async fn() {
    const model = await PolicyModel.load({ dir: DIR, family: "minimax-m2" });
    const lists = cliToolLists();
    const messages: Message[] = [{ role: "user", content: "hi" }];
    const refs = await withRenderers(
      DIR,
      "minimax-m2",
      { model_identity: IDENTITY },
      lists.map((l) => renderRequest(messages, l.tools, true)),
    ) as RenderResult[];
    for (const [i, { cli, tools }] of lists.entries()) {
      const ours = await model.renderFull(messages, tools);
      assert.equal(ours.text, refs[i].text, cli);
      assert.deepEqual(ours.ids, refs[i].encoded_ids, cli);
    }
  },
});
