/**
 * The gpt-oss family against its references, over a family suite's generated conversations
 * (`registerFamilyChecks`):
 *
 * - openai-harmony (OpenAI's renderer): every full render, per turn and whole, equal id for id;
 * - openai-harmony's parser: every sampled answer read into the same reasoning, content and
 *   calls as rollgate's parser;
 * - renderers' `gpt_oss`: equal id for id where its conversion of messages follows the format;
 *   where it does not (it opens `analysis` in the generation prompt, writes calls without
 *   `<|constrain|>json`, puts text before calls on `final`, keeps analysis by its own rule, moves
 *   the first system message to the front, declares a tool without properties as taking an empty
 *   object), the render is counted under those differences, and
 *   a difference in a conversation with none of them fails.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { AssistantMessage, Message, ToolSpec } from "../../canonical/mod.ts";
import { firstDifference } from "../invariants/drive.ts";
import { type HarmonyParsedMessage, withHarmony } from "../reference/harmony_env.ts";
import { renderRequest, type RenderResult, withRenderers } from "../reference/renderers_env.ts";
import { referenceMissing, skipGroup } from "../support/skips.ts";
import type { FamilySuite } from "./family_check.ts";

const SHARED = { sanitizeOps: false, sanitizeResources: false };

/** Every render of a suite: each turn's history with the generation prompt, and the whole. */
function renders(s: FamilySuite) {
  const out: {
    label: string;
    history: Message[];
    tools: ToolSpec[];
    prompt: boolean;
    ours: { text: string; ids: number[] };
  }[] = [];
  for (const [i, c] of s.conversations.entries()) {
    const g = c.conversation;
    for (const [k, d] of g.turns.entries()) {
      out.push({
        label: `seed ${g.seed}, turn ${k}`,
        history: s.canonical[i].slice(0, d.index),
        tools: g.tools,
        prompt: true,
        ours: s.fulls[i][k],
      });
    }
    out.push({
      label: `seed ${g.seed}, whole`,
      history: s.canonical[i],
      tools: g.tools,
      prompt: false,
      ours: s.finals[i],
    });
  }
  return out;
}

/** What harmony's parser read, as an assistant message (call ids left out). */
function harmonyAnswer(messages: HarmonyParsedMessage[]): Omit<AssistantMessage, "role"> {
  const reasoning: string[] = [], content: string[] = [];
  const calls: { name: string; arguments: string }[] = [];
  for (const m of messages) {
    if (m.recipient?.startsWith("functions.")) {
      calls.push({ name: m.recipient.slice("functions.".length), arguments: m.text });
    } else if (m.channel === "analysis") reasoning.push(m.text);
    else content.push(m.text);
  }
  const out: Omit<AssistantMessage, "role"> = { content: content.join("\n") };
  if (reasoning.length > 0) out.reasoning_content = reasoning.join("\n");
  if (calls.length > 0) out.tool_calls = calls.map((c) => ({ id: "", ...c }));
  return out;
}

/** Registers the harmony checks on a gpt-oss suite; `config` is the system message's fields. */
export function registerHarmonyChecks(
  label: string,
  getSuite: () => Promise<FamilySuite>,
  config: Record<string, unknown>,
): void {
  const name = (what: string) => `family ${label}: ${what}`;
  const ignore = skipGroup(`openai-harmony cross-check (${label})`, referenceMissing());

  Deno.test({
    name: name("full renders equal openai-harmony id for id"),
    ignore,
    ...SHARED,
    async fn() {
      const s = await getSuite();
      const all = renders(s);
      const results = await withHarmony(
        s.model.files.dir,
        config,
        all.map((r) => renderRequest(r.history, r.tools, r.prompt)),
      );
      for (const [n, ref] of results.entries()) {
        const { label, ours } = all[n];
        assert.equal(ref.error, undefined, `${label}: ${ref.error}`);
        assert.equal(ours.text, ref.text, label);
        const at = firstDifference(ours.ids, ref.ids!);
        assert.equal(at, -1, `${label}: ids differ from openai-harmony's at ${at}`);
      }
      console.log(`${label}: ${results.length} renders identical to openai-harmony id for id`);
    },
  });

  Deno.test({
    name: name("openai-harmony's parser reads every sampled answer as rollgate's does"),
    ignore,
    ...SHARED,
    async fn() {
      const s = await getSuite();
      const outputs = s.conversations.flatMap((c) =>
        c.turns.map((d) => ({ ids: d.outputIds, tools: c.conversation.tools }))
      );
      const results = await withHarmony(
        s.model.files.dir,
        config,
        outputs.map((o) => ({ op: "parse" as const, ids: o.ids })),
      );
      let calls = 0;
      for (const [n, ref] of results.entries()) {
        assert.equal(ref.error, undefined, `output ${n}: ${ref.error}`);
        const ours = (await s.model.parse(outputs[n].ids, () => "", outputs[n].tools)).message;
        const { role: _, ...rest } = ours;
        assert.deepEqual(rest, harmonyAnswer(ref.messages!), `output ${n}`);
        calls += ours.tool_calls?.length ?? 0;
      }
      console.log(
        `${label}: ${results.length} sampled answers (${calls} calls) read alike by ` +
          "openai-harmony's parser",
      );
    },
  });

  Deno.test({
    name: name("full renders equal renderers gpt-oss where its conversion follows the format"),
    ignore,
    ...SHARED,
    async fn() {
      const s = await getSuite();
      const all = renders(s);
      const results = await withRenderers(
        s.model.files.dir,
        "gpt-oss",
        config,
        all.map((r) => renderRequest(r.history, r.tools, r.prompt)),
      ) as RenderResult[];
      const id = (token: string) => s.model.idOf(token)!;
      // renderers' generation prompt opens the analysis channel: `<|channel|>analysis<|message|>`.
      const analysisPrompt = [
        id("<|channel|>"),
        ...await s.model.tokenizer.encode("analysis"),
        id("<|message|>"),
      ];
      const counts = { exact: 0, calls: 0, preamble: 0, analysis: 0, hoisted: 0, noArguments: 0 };
      for (const [n, ref] of results.entries()) {
        const { label, history, tools, prompt, ours } = all[n];
        assert.equal(ref.error, undefined, `${label}: ${ref.error}`);
        let theirs = ref.ids!;
        if (prompt) {
          assert.deepEqual(theirs.slice(-analysisPrompt.length), analysisPrompt, label);
          theirs = theirs.slice(0, -analysisPrompt.length);
        } else if (history.at(-1)?.role === "assistant" && theirs.at(-1) === id("<|return|>")) {
          // renderers closes a conversation ending in a final answer with `<|return|>`.
          theirs = [...theirs.slice(0, -1), id("<|end|>")];
        }
        if (firstDifference(ours.ids, theirs) === -1) {
          counts.exact++;
          continue;
        }
        const answers = history.filter((m): m is AssistantMessage => m.role === "assistant");
        const why = {
          calls: answers.some((m) => (m.tool_calls ?? []).length > 0),
          preamble: answers.some((m) => (m.tool_calls ?? []).length > 0 && m.content !== ""),
          analysis: answers.some((m) => !!m.reasoning_content),
          hoisted: history[0]?.role !== "system" && history.some((m) => m.role === "system"),
          noArguments: tools.some((t) => {
            const p = t.parameters as { properties?: object } | undefined;
            return Object.keys(p?.properties ?? {}).length === 0;
          }),
        };
        assert.ok(
          Object.values(why).some((v) => v),
          `${label}: differs from renderers at ${firstDifference(ours.ids, theirs)} with none ` +
            "of its known conversion differences",
        );
        for (const [k, v] of Object.entries(why)) if (v) counts[k as keyof typeof counts]++;
      }
      console.log(
        `${label}: ${counts.exact} of ${results.length} renders identical to renderers gpt-oss ` +
          "id for id (its generation prompt's <|channel|>analysis<|message|> and closing " +
          `<|return|> aside); the others hold calls it writes without <|constrain|>json ` +
          `(${counts.calls}), text before calls it puts on final (${counts.preamble}), reasoning ` +
          `it keeps by its own rule (${counts.analysis}), a system message it moves to the front ` +
          `(${counts.hoisted}), a tool without properties it declares (_: {}) => any instead of ` +
          `() => any (${counts.noArguments})`,
      );
      assert.ok(counts.exact >= s.conversations.length, `only ${counts.exact} exact`);
    },
  });
}
