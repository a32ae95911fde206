/**
 * The gpt-oss family against its references, over a family suite's generated conversations
 * (`registerFamilyChecks`):
 *
 * - openai-harmony (OpenAI's renderer): every full render, per turn and whole, equal id for id;
 * - openai-harmony's parser: every sampled answer read into the same reasoning, content and
 *   calls as rollgate's parser;
 * - renderers' `gpt_oss` (which renders through openai-harmony): equal to openai-harmony given
 *   renderers' own message conversion (`RENDERERS_CHOICES`: it opens `analysis` in the
 *   generation prompt, writes calls without `<|constrain|>json`, puts text before calls on
 *   `final`, keeps analysis by its own rule, moves the first system message to the front,
 *   declares a tool without properties as taking an empty object, authors an unnamed tool result
 *   `functions.unknown`), id for id in every render; where it differs from rollgate, each
 *   choice is switched on alone to count which ones change the render.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { AssistantMessage, Message, ToolSpec } from "../../canonical/mod.ts";
import { firstDifference } from "../invariants/drive.ts";
import {
  type HarmonyParsedMessage,
  RENDERERS_CHOICES,
  withHarmony,
} from "../reference/harmony_env.ts";
import { renderRequest, withRenderers } from "../reference/renderers_env.ts";
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

/** A tool whose object schema has no properties: gpt-oss's template declares it `() => any`. */
function withoutProperties(tool: ToolSpec): boolean {
  const properties = (tool.parameters as { properties?: object } | undefined)?.properties;
  return !properties || Object.keys(properties).length === 0;
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
      // Each render twice: with a tool without properties declared as gpt-oss's own chat
      // template declares it (`() => any`, what rollgate follows: the model was trained on
      // it), and with the schemas as given, which openai-harmony 0.0.8 declares
      // `(_: {\n}) => any`: that render must differ from rollgate's there and nowhere else.
      const results = await withHarmony(
        s.model.files.dir,
        config,
        all.flatMap((r) => {
          const request = renderRequest(r.history, r.tools, r.prompt);
          return [request, { ...request, tools_as_given: true }];
        }),
      );
      let asGivenDiffer = 0;
      for (const [n, r] of all.entries()) {
        const [ref, asGiven] = [results[2 * n], results[2 * n + 1]];
        const { label, ours } = r;
        assert.equal(ref.error, undefined, `${label}: ${ref.error}`);
        assert.equal(ours.text, ref.text, label);
        const at = firstDifference(ours.ids, ref.ids!);
        assert.equal(at, -1, `${label}: ids differ from openai-harmony's at ${at}`);
        assert.equal(asGiven.error, undefined, `${label}: ${asGiven.error}`);
        if (asGiven.text === ours.text) {
          assert.equal(firstDifference(ours.ids, asGiven.ids!), -1, label);
          continue;
        }
        asGivenDiffer++;
        assert.ok(r.tools.some(withoutProperties), label);
        assert.equal(asGiven.text!.replaceAll("(_: {\n}) => any", "() => any"), ours.text, label);
      }
      console.log(
        `${label}: ${all.length} renders identical to openai-harmony id for id; with tool ` +
          `schemas as given ${all.length - asGivenDiffer} identical and ${asGivenDiffer} differ ` +
          "only in harmony 0.0.8's (_: {\\n}) => any for a tool without properties",
      );
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
    name: name("renderers gpt-oss differs from openai-harmony only in its message conversion"),
    ignore,
    ...SHARED,
    async fn() {
      const s = await getSuite();
      const all = renders(s);
      const requests = all.map((r) => renderRequest(r.history, r.tools, r.prompt));
      const theirs = await withRenderers(s.model.files.dir, "gpt-oss", config, requests);
      // openai-harmony with all of renderers' conversion choices, then with each one alone.
      const harmony = await withHarmony(
        s.model.files.dir,
        config,
        requests.flatMap((r) => [
          { ...r, conversion: "renderers" as const },
          ...RENDERERS_CHOICES.map((c) => ({ ...r, conversion: [c] })),
        ]),
      );
      const per = RENDERERS_CHOICES.length + 1;
      const counts = Object.fromEntries(RENDERERS_CHOICES.map((c) => [c, 0]));
      let exact = 0;
      for (const [n, ref] of theirs.entries()) {
        const { label, ours } = all[n];
        assert.equal(ref.error, undefined, `${label}: ${ref.error}`);
        const converted = harmony[n * per];
        assert.equal(converted.error, undefined, `${label}: ${converted.error}`);
        const at = firstDifference(ref.ids!, converted.ids!);
        assert.equal(
          at,
          -1,
          `${label}: renderers differs from harmony with its conversion at ${at}`,
        );
        if (firstDifference(ours.ids, ref.ids!) === -1) {
          exact++;
          continue;
        }
        // rollgate equals harmony's own conversion (checked above): what renderers changes is
        // what its choices change, each seen alone.
        const changed = RENDERERS_CHOICES.filter((_, j) =>
          firstDifference(harmony[n * per + 1 + j].ids!, ours.ids) !== -1
        );
        assert.ok(changed.length > 0, `${label}: differs from renderers, no choice explains it`);
        for (const c of changed) counts[c]++;
      }
      console.log(
        `${label}: renderers gpt-oss equals openai-harmony with renderers' message conversion in ` +
          `all ${theirs.length} renders; ${exact} equal rollgate's id for id; the others differ ` +
          "by these choices of renderers (renders each changes): " +
          RENDERERS_CHOICES.map((c) => `${c} ${counts[c]}`).join(", "),
      );
    },
  });
}
