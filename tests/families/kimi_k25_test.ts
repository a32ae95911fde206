/**
 * Kimi K2.5 / K2.6 on a tokenizer double (the Qwen3 vocabulary plus Kimi's special tokens, with
 * `<think>` and `</think>` as text as in Kimi's vocabulary, `tests/support/tokenizer_doubles.ts`:
 * no package ships Kimi's tokenizer), checked against `renderers` (`kimi-k2.5`, thinking on and
 * off) over generated conversations with the format's hard cases: JSON string values holding the
 * section markers and `</think>`, booleans, floats, nested objects, unicode, parallel calls, and
 * tool schemas written as TypeScript declarations. Call ids are Kimi's own (`functions.NAME:INDEX`).
 * K2.6's `preserve_thinking` has no reference in `renderers` 0.1.12: checked for parse round trip,
 * prefix stability and streaming only.
 */
import assert from "node:assert/strict";
import type { AssistantMessage, Message } from "../../canonical/mod.ts";
import { PolicyModel } from "../../model/mod.ts";
import { renderRequest, type RenderResult, withRenderers } from "../reference/renderers_env.ts";
import { referenceMissing, skipGroup } from "../support/skips.ts";
import { cliToolLists } from "./cli_tool_lists.ts";
import { tokenizerDoubleDir } from "../support/tokenizer_doubles.ts";
import { registerFamilyChecks } from "./family_check.ts";
import { withoutReasoning } from "./canonical_forms.ts";
import { KIMI_K25_MARKUP } from "./markup.ts";

const DIR = await tokenizerDoubleDir("kimi-k2.5");
globalThis.addEventListener("unload", () => Deno.removeSync(DIR, { recursive: true }));

const generator = {
  typedArguments: true,
  markup: KIMI_K25_MARKUP,
  toolCallId: (name: string, n: number) => `functions.${name}:${n}`,
};

/** With thinking the prompt opened `<think>`: every answer has reasoning (empty too), verbatim. */
function withReasoning(m: AssistantMessage): AssistantMessage {
  return { ...m, reasoning_content: m.reasoning_content ?? "" };
}

registerFamilyChecks({
  label: "kimi-k2.5",
  model: { dir: DIR, family: "kimi-k2.5" },
  reference: { renderer: "kimi-k2.5", config: { thinking: true } },
  generator,
  canonical: withReasoning,
  count: 100,
  firstSeed: 70001,
});

registerFamilyChecks({
  label: "kimi-k2.5 thinking off",
  model: { dir: DIR, family: "kimi-k2.5", templateKwargs: { thinking: false } },
  reference: { renderer: "kimi-k2.5", config: { thinking: false } },
  generator,
  canonical: withoutReasoning,
  count: 40,
  firstSeed: 71001,
});

registerFamilyChecks({
  label: "kimi-k2.6 preserve_thinking",
  model: { dir: DIR, family: "kimi-k2.5", templateKwargs: { preserve_thinking: true } },
  reference: null,
  generator,
  canonical: withReasoning,
  count: 40,
  firstSeed: 72001,
});

/**
 * `schema` with every sub-schema that has no `type` (nor `$ref`, `anyOf`, `enum`) typed `any`:
 * what rollgate writes for one, which the reference (as the upstream encoder) refuses.
 */
function typedAny(schema: unknown): unknown {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return schema;
  const s = { ...schema as Record<string, unknown> };
  const untyped = Object.keys(s).length > 0 &&
    !["type", "$ref", "anyOf", "enum"].some((k) => Object.hasOwn(s, k));
  if (untyped) s.type = "any";
  if (s.properties) {
    s.properties = Object.fromEntries(
      Object.entries(s.properties as Record<string, unknown>).map(([k, v]) => [k, typedAny(v)]),
    );
  }
  if (s.items) s.items = typedAny(s.items);
  if (Array.isArray(s.anyOf)) s.anyOf = s.anyOf.map(typedAny);
  return s;
}

Deno.test({
  name: "kimi-k2.5: the real CLIs' tool lists declared as renderers declares them, id for id",
  ignore: skipGroup("renderers cross-check (kimi-k2.5 CLI tools)", referenceMissing()),
  async fn() {
    const model = await PolicyModel.load({ dir: DIR, family: "kimi-k2.5" });
    const lists = cliToolLists();
    const messages: Message[] = [{ role: "user", content: "hi" }];
    const refs = await withRenderers(
      DIR,
      "kimi-k2.5",
      {},
      lists.map((l) =>
        renderRequest(
          messages,
          l.tools.map((t) => ({ ...t, parameters: typedAny(t.parameters) })),
          true,
        )
      ),
    ) as RenderResult[];
    for (const [i, { cli, tools }] of lists.entries()) {
      assert.equal(refs[i].error, undefined, cli);
      const ours = await model.renderFull(messages, tools);
      assert.equal(ours.text, refs[i].text, cli);
      assert.deepEqual(ours.ids, refs[i].encoded_ids, cli);
    }
  },
});
