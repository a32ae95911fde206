/**
 * gpt-oss: OpenAI's harmony format. No Jinja template: the prompt is written in code from the
 * format (`conversation.ts`, `render.ts`, checked id for id against the `openai-harmony`
 * renderer), the output read back from its channels (`output.ts`, `stream.ts`).
 *
 * - Turns end with two sampled ids: `<|return|>` after the final answer, `<|call|>` after a tool
 *   call (both stop generation); history writes `<|end|>` for `<|return|>`.
 * - A full render of the history rewrites answers in three places: `<|return|>` → `<|end|>`, a
 *   call's `to=functions.NAME` moved from after the channel (as gpt-oss writes it) to before it,
 *   and analysis before the first final answer dropped once the conversation ends at a final
 *   answer. rollgate keeps the sampled ids (`FamilyQuirks.rewritesAnswers`).
 *
 * Template variables (`--template-kwargs`): `reasoning_effort` (`low`, `medium` (default),
 * `high`), `conversation_start_date` (default: the UTC date the family was bound),
 * `model_identity`, `knowledge_cutoff` (default harmony's).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelFiles } from "../../model_files.ts";
 * import { gptOss } from "./mod.ts";
 * import { HARMONY_TOKENS } from "./render.ts";
 *
 * // Model files with only a chat template (and added tokens): enough to detect a family.
 * const files = (chat_template: string, added: string[] = []) =>
 *   ({
 *     config: {
 *       chat_template,
 *       added_tokens_decoder: Object.fromEntries(added.map((content, i) => [i, { content }])),
 *     },
 *   }) as unknown as ModelFiles;
 * // Detected by its added tokens (the template is not needed).
 * assert.ok(gptOss.detect(files("", Object.values(HARMONY_TOKENS))));
 * assert.ok(!gptOss.detect(files("", ["<|im_start|>"])));
 * ```
 *
 * @module
 */
import { addedTokenIds } from "../../model_files.ts";
import { SpecialText } from "../../special_text.ts";
import type { StreamingOutputParser } from "../../parsers/mod.ts";
import {
  type ChatFormat,
  type FamilyContext,
  FamilyError,
  type ModelFamily,
  type OutputFormat,
} from "../family.ts";
import type { HarmonyPreamble } from "./conversation.ts";
import { OrdinaryTextEncoder } from "./ordinary_text.ts";
import { HarmonyParser, readHeader, splitMessages } from "./output.ts";
import { HARMONY_TOKENS, type HarmonyIds, HarmonyRenderer } from "./render.ts";
import { HarmonyStreamParser } from "./stream.ts";

const FAMILY = "gpt-oss";

/** Harmony's special-token ids, or a `FamilyError` naming the missing ones. */
export function harmonyIds(
  idOf: (token: string) => number | undefined,
  family = FAMILY,
): HarmonyIds {
  const entries = Object.entries(HARMONY_TOKENS).map(([k, t]) => [k, idOf(t), t] as const);
  const missing = entries.filter(([, id]) => id === undefined).map(([, , t]) => t);
  if (missing.length > 0) {
    throw new FamilyError(`${family}: the tokenizer has no added token ${missing.join(", ")}`);
  }
  return Object.fromEntries(entries.map(([k, id]) => [k, id])) as unknown as HarmonyIds;
}

/** Parser and streaming parser of harmony output. */
export function harmonyOutputFormat(
  ids: HarmonyIds,
  decode: (ids: number[]) => Promise<string>,
): OutputFormat {
  return {
    parser: new HarmonyParser(ids, decode),
    streamingParser: (): StreamingOutputParser => new HarmonyStreamParser(ids, decode),
  };
}

const EFFORTS = ["low", "medium", "high"] as const;

/** The system message's fields from the template variables. */
function harmonyPreamble(
  kwargs: Record<string, unknown>,
  today = new Date(),
): HarmonyPreamble {
  const text = (key: string, fallback: string): string => {
    const v = kwargs[key];
    if (v === undefined) return fallback;
    if (typeof v !== "string") throw new FamilyError(`${FAMILY}: ${key} must be a string`);
    return v;
  };
  const effort = text("reasoning_effort", "medium").toLowerCase();
  if (!(EFFORTS as readonly string[]).includes(effort)) {
    throw new FamilyError(`${FAMILY}: reasoning_effort must be one of ${EFFORTS.join(", ")}`);
  }
  return {
    modelIdentity: text(
      "model_identity",
      "You are ChatGPT, a large language model trained by OpenAI.",
    ),
    knowledgeCutoff: text("knowledge_cutoff", "2024-06"),
    conversationStartDate: text("conversation_start_date", today.toISOString().slice(0, 10)),
    reasoningEffort: effort as HarmonyPreamble["reasoningEffort"],
  };
}

const REWRITES = [
  "a sampled <|return|> is written <|end|>",
  "a call's to=functions.NAME is written before <|channel|> instead of after the channel name",
  "analysis before the first final answer is dropped once the conversation ends at a final answer",
];

function bind(ctx: FamilyContext): Promise<ChatFormat> {
  const ids = harmonyIds(ctx.idOf);
  const preamble = harmonyPreamble(ctx.templateKwargs);
  const added = [...addedTokenIds(ctx.files.config).keys()];
  const renderer = new HarmonyRenderer(
    ids,
    new OrdinaryTextEncoder(ctx.tokenizer, added),
    preamble,
    new SpecialText(ctx.tokenizer.addedTokens),
  );
  const decode = (x: number[]) => ctx.tokenizer.decode(x);
  return Promise.resolve({
    family: FAMILY,
    renderer,
    ...harmonyOutputFormat(ids, decode),
    endOfTurn: { id: ids.end, text: HARMONY_TOKENS.end },
    sampledTurnEnds: {
      ids: [ids.return, ids.call],
      async endFor(outputIds) {
        const last = splitMessages(outputIds, ids).at(-1);
        if (!last) return ids.return;
        const header = await decode(outputIds.slice(last.header[0], last.header[1]));
        return readHeader(header, last.promptOpened).recipient === undefined
          ? ids.return
          : ids.call;
      },
      historyRewrites: new Map([[ids.return, ids.end]]),
    },
    stopTokenIds: [ids.return, ids.call],
    toolResponseMarkers: null,
    quirks: {
      argumentRendering: "JSON verbatim as the body of a commentary message to=functions.NAME " +
        "<|constrain|>json",
      dropsOldReasoning: true,
      promptOpensReasoning: false,
      rewritesAnswers: REWRITES,
    },
    notes: [
      `gpt-oss (harmony): current date ${preamble.conversationStartDate}, reasoning ` +
      `${preamble.reasoningEffort}`,
      "a full re-render of the history rewrites sampled answers (" + REWRITES.join("; ") +
      "); rollgate keeps the sampled ids, so prompts differ from a re-render there " +
      "(audit: differences inside earlier turns' generation prompts and kept sampled ids)",
    ],
  });
}

/** A model directory with harmony's special tokens (gpt-oss ships no chat template). */
function detect(files: Parameters<ModelFamily["detect"]>[0]): boolean {
  const added = addedTokenIds(files.config);
  return Object.values(HARMONY_TOKENS).every((t) => added.has(t));
}

export const gptOss: ModelFamily = {
  name: FAMILY,
  templateOptions: {
    reasoning_effort: EFFORTS,
    conversation_start_date: "text",
    model_identity: "text",
    knowledge_cutoff: "text",
  },
  summary: "gpt-oss (harmony): analysis/commentary/final channels, to=functions.NAME JSON " +
    "calls, turns end with <|return|> or <|call|>",
  detect,
  bind,
};
