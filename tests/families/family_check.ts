/**
 * The checks every model family must pass, registered as `Deno.test`s by `registerFamilyChecks`:
 * seeded random conversations (multi-turn, parallel tool calls, reasoning, unicode, typed and
 * nested arguments, strings holding the family's own markup) driven turn by turn through a real
 * `TurnRunner` with a scripted backend (a test double at the model boundary: it returns the ids
 * the family's template has the policy write for each generated assistant message).
 *
 * - parse: every recorded answer is the generated message (in the family's canonical form),
 *   no malformed calls, no drift except where a full render writes an empty-reasoning answer
 *   across the generation prompt (flagged at a negative position);
 * - delta: inside a tool loop the gateway's delta-built prompt equals a full render; elsewhere
 *   the two differ only inside earlier turns' generation prompt + sampled ids (the reasoning
 *   the template drops), counted and reported;
 * - reference: each full render equals PrimeIntellect `renderers`' render, text and ids;
 *   where `renderers` encodes one span of text in pieces (not what a template's tokenization
 *   gives), its ids differ: reported, and checked to be only that;
 * - stream: the streaming parser never sends text that the final parse contradicts.
 *
 * Environment: `ROLLGATE_FAMILY_CONVERSATIONS` (default per family) widens the sample.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { AssistantMessage, Message, ToolSpec } from "../../canonical/mod.ts";
import { PolicyModel, type PolicyModelOptions } from "../../model/policy_model.ts";
import {
  generateConversations,
  type GeneratorOptions,
  Rng,
} from "../invariants/conversation_generator.ts";
import {
  driveConversation,
  type DrivenConversation,
  firstDifference,
} from "../invariants/drive.ts";
import { renderRequest, type RenderResult, withRenderers } from "../reference/renderers_env.ts";
import { referenceMissing, skipGroup } from "../support/skips.ts";
import { streamAgainstParse } from "../support/streamed_prefix.ts";

export interface FamilyCheckOptions {
  /** Test-name prefix, e.g. `qwen3.5`. */
  label: string;
  /** `PolicyModel.load` options: `family`, `dir`, `templateKwargs`. */
  model: PolicyModelOptions;
  /**
   * `renderers` config name and fields to compare with, or null when it has none; `prepare`
   * turns a conversation into what the reference is given (a family whose reference renders no
   * tools gets the tool text in its system message).
   */
  reference: {
    renderer: string;
    config?: Record<string, unknown>;
    prepare?: (messages: readonly Message[], tools: readonly ToolSpec[]) => {
      messages: Message[];
      tools: ToolSpec[];
    };
    /**
     * Where the reference departs from the model's template, the text it is known to render
     * instead (documented per family); renders it matches this way are counted as deviations.
     */
    deviation?: {
      what: string;
      text(messages: readonly Message[], tools: readonly ToolSpec[], prompt: boolean): string;
    };
    /**
     * Where the reference encodes a span of nearly every render in pieces (Laguna XS.2: the
     * system text and its closing tag), so few renders match its own ids: what it splits. The
     * text and the whole-text ids must still match in every render.
     */
    splitsEveryRender?: string;
  } | null;
  /**
   * The template is not prefix-stable even inside a tool loop (DeepSeek V3.1 thinking: every
   * re-render drops the reasoning and closes the `<think>` the prompt opened): no prompt has to
   * equal a full render, and where they differ it must still be only inside earlier turns'
   * generation prompt + sampled ids.
   */
  notPrefixStable?: boolean;

  generator: GeneratorOptions;
  /** The message the family's template makes of a generated one (e.g. text trimmed). */
  canonical?: (m: AssistantMessage) => AssistantMessage;
  count: number;
  firstSeed: number;
}

/** The driven conversations and their renders, shared by a family's checks. */
export interface FamilySuite {
  model: PolicyModel;
  conversations: DrivenConversation[];
  /** Per conversation: the generated messages in canonical form (generator tool-call ids). */
  canonical: Message[][];
  /** Per conversation, per turn: `renderFull(history)`, and the final render (no prompt). */
  fulls: { text: string; ids: number[] }[][];
  finals: { text: string; ids: number[] }[];
}

const SHARED = { sanitizeOps: false, sanitizeResources: false };

function where(c: DrivenConversation, k?: number): string {
  return `seed ${c.conversation.seed}${k === undefined ? "" : `, turn ${k}`}`;
}

function envInt(name: string, fallback: number): number {
  const v = Deno.env.get(name);
  return v && /^\d+$/.test(v) ? Number(v) : fallback;
}

async function buildSuite(o: FamilyCheckOptions): Promise<FamilySuite> {
  const model = await PolicyModel.load(o.model);
  const canonicalOf = o.canonical ?? ((m: AssistantMessage) => m);
  const conversations: DrivenConversation[] = [];
  const canonical: Message[][] = [];
  const fulls: FamilySuite["fulls"] = [];
  const finals: FamilySuite["finals"] = [];
  const count = envInt("ROLLGATE_FAMILY_CONVERSATIONS", o.count);
  for (const g of generateConversations(o.firstSeed, count, o.generator)) {
    const messages = g.messages.map((m) => m.role === "assistant" ? canonicalOf(m) : m);
    const conversation = { ...g, messages };
    const c = await driveConversation(model, conversation, {
      stripEndOfTurn: (k) => (g.seed + k) % 5 === 0,
      logprobs: g.seed % 9 !== 0,
      sampledIds: (k) =>
        model.renderAnswerIds(messages[g.turns[k].index] as AssistantMessage).then((ids) => {
          assert.ok(ids.length > 0, `seed ${g.seed}, turn ${k}: no answer render`);
          return ids;
        }),
    });
    conversations.push(c);
    canonical.push(messages);
    fulls.push(
      await Promise.all(c.turns.map((t) => model.renderFull(t.history, g.tools))),
    );
    finals.push(await model.renderFull(c.messages, g.tools, false));
  }
  return { model, conversations, canonical, fulls, finals };
}

/**
 * Whether `ours` equals `full` once each of `windows` (sorted, disjoint ranges of `ours`) is
 * replaced by any ids: the pieces of `ours` between windows occur in `full` in order, the first
 * at its start and the last at its end.
 */
export function equalOutsideWindows(
  ours: readonly number[],
  full: readonly number[],
  windows: readonly (readonly [number, number])[],
): boolean {
  const pieces: number[][] = [];
  let from = 0;
  for (const [a, b] of windows) {
    pieces.push(ours.slice(from, a) as number[]);
    from = b;
  }
  const last = ours.slice(from);
  const first = pieces.shift() ?? last;
  if (firstDifference(first, full.slice(0, first.length)) !== -1) return false;
  let at = first.length;
  if (pieces.length === 0 && first === last) return at === full.length;
  for (const piece of pieces) {
    const found = indexOfIds(full, piece, at);
    if (found < 0) return false;
    at = found + piece.length;
  }
  const end = full.length - last.length;
  return end >= at && firstDifference(last, full.slice(end)) === -1;
}

/** First position ≥ `from` where `needle` occurs in `ids`, or -1. */
function indexOfIds(ids: readonly number[], needle: readonly number[], from: number): number {
  if (needle.length === 0) return from;
  for (let i = ids.indexOf(needle[0], from); i >= 0; i = ids.indexOf(needle[0], i + 1)) {
    if (i + needle.length > ids.length) return -1;
    let k = 1;
    while (k < needle.length && ids[i + k] === needle[k]) k++;
    if (k === needle.length) return i;
  }
  return -1;
}

/**
 * Registers the standard family checks (see the module doc); returns the suite they share, for a
 * family's own checks.
 */
export function registerFamilyChecks(o: FamilyCheckOptions): () => Promise<FamilySuite> {
  let suite: Promise<FamilySuite> | undefined;
  const getSuite = () => suite ??= buildSuite(o);
  const name = (what: string) => `family ${o.label}: ${what}`;

  Deno.test({
    name: name(
      "answers parse back to the generated messages; no malformed calls; drift only where a full render changes the generation prompt",
    ),
    ...SHARED,
    async fn() {
      const s = await getSuite();
      let turns = 0, calls = 0;
      for (const [i, c] of s.conversations.entries()) {
        for (const [k, d] of c.turns.entries()) {
          const t = d.turn;
          assert.equal(t.status, "done", `${where(c, k)}: ${t.error}`);
          assert.equal(t.mount, k === 0 ? "root" : "extend", where(c, k));
          assert.equal(t.malformedToolCalls, 0, where(c, k));
          assert.deepEqual(t.message, c.messages[d.generated.index], where(c, k));
          // The one drift a generated answer has: empty reasoning that a full render writes
          // across the generation prompt (Qwen3.5's `<think>\n` + `\n</think>`, GLM-5's
          // dropped `<think>`), flagged inside the generation prompt (a negative position).
          const emptyReasoning = (t.message as AssistantMessage).reasoning_content === "";
          assert.ok(
            t.drift === null || (emptyReasoning && t.drift.position < 0),
            `${where(c, k)}: ${JSON.stringify(t.drift)}`,
          );
          // The recorded ids are the policy's, verbatim.
          assert.deepEqual(Array.from(t.outputIds), d.outputIds, where(c, k));
          turns++;
          calls += t.message?.tool_calls?.length ?? 0;
        }
        // The canonical conversation is what the client echoed (modulo tool-call ids).
        assert.equal(c.messages.length, s.canonical[i].length);
      }
      console.log(
        `${o.label}: ${s.conversations.length} conversations, ${turns} turns, ${calls} calls`,
      );
      assert.ok(turns >= s.conversations.length && calls > 0);
    },
  });

  Deno.test({
    name: name("delta-built prompts equal a full render, except retained reasoning (reported)"),
    ...SHARED,
    async fn() {
      const s = await getSuite();
      const rewrites = (s.model.format.quirks.rewritesAnswers ?? []).length > 0;
      // The generation prompt's length at a turn (after tool outputs DeepSeek V3.1 writes none).
      const generationPrompt = async (i: number, j: number) =>
        s.fulls[i][j].ids.length -
        (await s.model.renderFull(
          s.conversations[i].turns[j].history,
          s.conversations[i].conversation.tools,
          false,
        )).ids.length;
      const markers = s.model.format.closingMarkers;
      /** The earlier turn sampled a closing marker that is not the next message's (GLM). */
      const keepsMarker = async (c: DrivenConversation, j: number) => {
        const last = c.turns[j].outputIds.at(-1)!;
        const next = c.messages[c.turns[j].generated.index + 1];
        if (!markers?.includes(last) || !next) return false;
        return (await s.model.renderDeltaIds([next])).ids[0] !== last;
      };
      let equal = 0, retained = 0, emptyThink = 0, keptMarker = 0;
      for (const [i, c] of s.conversations.entries()) {
        for (const [k, d] of c.turns.entries()) {
          const full = s.fulls[i][k].ids;
          const at = firstDifference(d.promptIds, full);
          if (at === -1) {
            equal++;
            continue;
          }
          // Turns with every earlier sampled text kept by the template must be equal, unless an
          // earlier answer had empty reasoning (the generation prompt's `<think>\n` followed by
          // the sampled `\n</think>` is not how `<think>\n\n</think>` tokenizes) or the family
          // declares that history rewrites answers (harmony).
          const empty = d.history.some((m) => m.role === "assistant" && m.reasoning_content === "");
          let marker = false;
          for (let j = 0; j < k && !marker; j++) marker = await keepsMarker(c, j);
          const stable = (d.generated.reasoningKept ||
            !s.model.format.quirks.dropsOldReasoning) &&
            !marker && !(rewrites && k > 0) &&
            !o.notPrefixStable;
          const mustEqual = stable && !empty;
          // A difference after an empty think block is flagged: an earlier turn's drift lies
          // in its generation prompt.
          if (stable && empty) {
            assert.ok(
              c.turns.slice(0, k).some((p) => (p.turn.drift?.position ?? 0) < 0),
              `${where(c, k)}: differs after an empty think block, and no earlier drift says so`,
            );
          }
          if (empty) emptyThink++;
          else if (marker) keptMarker++;
          assert.ok(
            !mustEqual,
            `${where(c, k)}: prompt ≠ full render at ${at}: ` +
              JSON.stringify(await s.model.decode(d.promptIds.slice(at - 5, at + 5))) + " vs " +
              JSON.stringify(await s.model.decode(full.slice(at - 5, at + 5))),
          );
          // Otherwise the two are equal outside earlier turns' generation prompt + sampled ids
          // (what the template drops, rewrites or tokenizes differently there).
          const windows = await Promise.all(
            c.turns.slice(0, k).map(async (p, j) =>
              [
                p.promptIds.length - await generationPrompt(i, j),
                p.promptIds.length + p.outputIds.length,
              ] as const
            ),
          );
          assert.ok(
            equalOutsideWindows(d.promptIds, full, windows),
            `${where(c, k)}: the prompt differs from a full render outside earlier generation ` +
              "prompts and sampled ids",
          );
          retained++;
        }
      }
      console.log(
        `${o.label}: ${equal} prompts equal a full render; ${retained} differ only inside ` +
          `earlier turns' generation prompt + sampled ids (${emptyThink} after an empty think ` +
          `block, ${keptMarker} keep a sampled stop marker that the next message does not ` +
          `share, the rest ${rewrites ? "rewritten answers and " : ""}dropped reasoning)`,
      );
      assert.ok(equal >= s.conversations.length || (o.notPrefixStable && equal > 0));
    },
  });

  if (o.reference !== null) {
    Deno.test({
      name: name(`full renders equal renderers ${o.reference.renderer}`),
      ignore: skipGroup(`renderers cross-check (${o.label})`, referenceMissing()),
      ...SHARED,
      async fn() {
        const s = await getSuite();
        const requests = [];
        const ours: {
          label: string;
          rendered: { text: string; ids: number[] };
          mid: boolean;
          deviation?: string;
        }[] = [];
        const deviation = o.reference!.deviation;
        for (const [i, c] of s.conversations.entries()) {
          const g = c.conversation;
          const midSystem = (ms: readonly Message[]) =>
            ms.some((m, j) =>
              m.role === "system" && ms.slice(0, j).some((x) => x.role !== "system")
            );
          const request = (ms: readonly Message[], generationPrompt: boolean) => {
            const given = o.reference!.prepare?.(ms, g.tools) ?? { messages: ms, tools: g.tools };
            return renderRequest(given.messages, given.tools, generationPrompt);
          };
          for (const [k, d] of g.turns.entries()) {
            const history = s.canonical[i].slice(0, d.index);
            requests.push(request(history, true));
            ours.push({
              label: where(c, k),
              rendered: s.fulls[i][k],
              mid: midSystem(history),
              deviation: deviation?.text(history, g.tools, true),
            });
          }
          requests.push(request(s.canonical[i], false));
          ours.push({
            label: `${where(c)}, whole`,
            rendered: s.finals[i],
            mid: midSystem(s.canonical[i]),
            deviation: deviation?.text(s.canonical[i], g.tools, false),
          });
        }
        const results = await withRenderers(
          s.model.files.dir,
          o.reference!.renderer,
          o.reference!.config ?? {},
          requests,
        ) as RenderResult[];
        let exact = 0, split = 0, refused = 0, deviating = 0;
        for (const [n, ref] of results.entries()) {
          const { label, rendered, mid } = ours[n];
          const expected = ours[n].deviation;
          if (ref.error !== undefined) {
            // The model's template refuses a system message after the first message; rollgate
            // renders it in place (documented deviation).
            assert.ok(
              mid && /System message must be at the beginning/.test(ref.error),
              `${label}: ${ref.error}`,
            );
            refused++;
            continue;
          }
          if (expected !== undefined && expected !== rendered.text) {
            // A known departure of the reference from the model's template: it renders exactly
            // the documented other text.
            assert.equal(
              expected.normalize("NFC"),
              ref.text!.normalize("NFC"),
              `${label} (${deviation!.what})`,
            );
            deviating++;
            continue;
          }
          // NFC: the Qwen tokenizers normalize, so their decoded text is NFC (DeepSeek's is not).
          assert.equal(rendered.text.normalize("NFC"), ref.text!.normalize("NFC"), label);
          const at = firstDifference(rendered.ids, ref.encoded_ids!);
          assert.equal(at, -1, `${label}: ids differ from the encoded reference text at ${at}`);
          if (firstDifference(ref.ids!, ref.encoded_ids!) === -1) exact++;
          else split++;
        }
        console.log(
          `${o.label}: ${exact} renders identical to renderers ${
            o.reference!.renderer
          } id for id; ` +
            `${split} identical in text where renderers' own ids split a text span (its ids are not ` +
            `the template's tokenization there); ${refused} refused by the reference ` +
            `(system message after the first)` +
            (deviation
              ? `; ${deviating} where it departs from the template (${deviation.what})`
              : ""),
        );
        if (o.reference!.splitsEveryRender === undefined) {
          assert.ok(exact > results.length / 4, `only ${exact} exact`);
        } else {
          console.log(`${o.label}: renderers splits ${o.reference!.splitsEveryRender}`);
        }
      },
    });
  }

  Deno.test({
    name: name("streamed reasoning and text are prefixes of the final parse (random chunks)"),
    ...SHARED,
    async fn() {
      const s = await getSuite();
      const rng = new Rng(o.firstSeed);
      let whole = 0, outputs = 0;
      for (const c of s.conversations) {
        for (const d of c.turns) {
          const { sent, final } = await streamAgainstParse(s.model, d.outputIds, {
            chunk: () => 1 + Math.floor(rng.next() * 8),
            tools: c.conversation.tools,
            label: where(c),
          });
          outputs++;
          if (sent.reasoning === (final.reasoning_content ?? "") && sent.text === final.content) {
            whole++;
          }
        }
      }
      console.log(`${o.label}: ${whole} of ${outputs} outputs streamed whole before the end`);
      assert.ok(whole > outputs / 4, `only ${whole} of ${outputs} streamed whole`);
    },
  });
  return getSuite;
}
