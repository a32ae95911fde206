/**
 * The contract of a model family: how a policy of that family reads a conversation (renderer)
 * and how its output is read back (parser), plus the ids and quirks the gateway needs.
 *
 * A `ModelFamily` is what the registry holds (name, detection, `bind`); `bind` ties it to a
 * loaded tokenizer and gives a `ChatFormat`, which is what the turn path uses.
 *
 * @module
 */
import type { AssistantMessage, Message, ToolCall, ToolSpec } from "../../canonical/mod.ts";
import type { ModelFiles } from "../model_files.ts";
import type { SpecialTextHit } from "../special_text.ts";
import type { OutputParser, StreamingOutputParser } from "../parsers/mod.ts";
import type { TextTokenizer } from "../tokenizer.ts";
import type { TemplateOptions } from "./template_options.ts";
import type { EngineRendering } from "./engine_rendering.ts";

/** A render: its text, the ids the tokenizer gives it, and special-token text in its content. */
export interface Rendered {
  /** The rendered text; empty when an engine rendered (only its ids come back). */
  text: string;
  ids: number[];
  /** Special-token text in the system, user and tool content rendered; positions index `ids`. */
  specialText: SpecialTextHit[];
  /**
   * Where each rendered tool message's output sits in `ids` (half-open, in message order), for
   * families whose tool outputs have no marker tokens of their own (harmony); ChatML families
   * leave it out and give `ChatFormat.toolResponseMarkers` instead.
   */
  toolOutputs?: { start: number; end: number }[];
  /** Where each image's pad tokens lie in `ids` (half-open, in message order), when it has any. */
  images?: { start: number; end: number }[];
}

/** How message content is tokenized. */
export interface RenderOptions {
  /**
   * Special-token text in system, user and tool content becomes plain-text ids, not control ids;
   * the template's own markup keeps its control ids (`special_text.ts`). Departs from what
   * `transformers` and inference engines do with the same conversation. Harmony tokenizes
   * content as plain text in either mode.
   */
  splitSpecialTokens?: boolean;
}

/**
 * What a delta render may look up in the history before it, lazily (a lookup costs what it
 * reads, never the whole history): harmony writes the tool's name as the author of a tool
 * result, and a tool message need not carry it.
 */
export interface DeltaHistory {
  /** The tool call with this id in an earlier assistant message, or undefined. */
  toolCall(id: string): ToolCall | undefined;
  /**
   * Where the call with this id stands among its assistant message's calls, and how many that
   * message has, or undefined: for formats that write parallel results in their calls' order
   * (DeepSeek V4, GLM-5.3). Without it, results keep the order they come in.
   */
  callPosition?(id: string): { index: number; count: number } | undefined;
}

/**
 * `messages` with each tool result that carries no name named by the call it answers in
 * `history` (else `fallback`), for formats that write a result under its tool's name.
 */
export function namedToolResults(
  messages: readonly Message[],
  history: DeltaHistory | undefined,
  fallback?: string,
): Message[] {
  return messages.map((m) =>
    m.role === "tool" && m.name === undefined
      ? { ...m, name: history?.toolCall(m.tool_call_id)?.name ?? fallback }
      : m
  );
}

/** Messages and tools → the policy's prompt, in full or as the delta after a recorded turn. */
export interface Renderer {
  /** Full render of a conversation (with the generation prompt unless told otherwise). */
  renderFull(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    addGenerationPrompt?: boolean,
    options?: RenderOptions,
  ): Promise<Rendered>;
  /**
   * What follows a recorded assistant turn's end-of-turn id when `newMessages` (tool results,
   * a user message; never an assistant message) are appended, generation prompt included.
   * Cost follows `newMessages`, not the history.
   */
  renderDelta(
    newMessages: readonly Message[],
    tools: readonly ToolSpec[],
    options?: RenderOptions,
    history?: DeltaHistory,
  ): Promise<Rendered>;
  /**
   * The ids the policy writes for `message` in the family's own form, after the generation
   * prompt and through its end id: what a full render puts where the sampled ids are (as an
   * earlier turn inside a tool loop), except where the family declares that history rewrites
   * answers (`FamilyQuirks.rewritesAnswers`); `[]` when the family cannot say. Compared with the
   * sampled ids to report drift; a scripted policy samples it.
   */
  renderAnswer(message: AssistantMessage): Promise<number[]>;
  /**
   * Where a full render also writes the generation prompt before `message` otherwise (Qwen3.5's
   * `<think>\n` followed by an empty reasoning's `\n</think>` tokenizes as `<think>`, `\n\n`,
   * `</think>`; GLM-5 drops the prompt's `<think>` before an answer without reasoning): the
   * generation prompt's ids from the first one the render writes otherwise (`prompt`), and the
   * render's ids from there through the answer's end (`rendered`). Null or absent: the render
   * keeps the generation prompt, and `renderAnswer` alone says how it writes the answer. Not
   * asked of a family that declares `quirks.rewritesAnswers` (its rewrites are known).
   */
  renderAnswerInPlace?(message: AssistantMessage): Promise<AnswerInPlace | null>;
}

/** A full render's generation prompt + answer where it departs from the generation prompt. */
export interface AnswerInPlace {
  /** The generation prompt's ids from the first one the full render writes otherwise. */
  prompt: number[];
  /** The full render's ids from that place through the answer's end. */
  rendered: number[];
}

/** Ids around tool outputs in a rendered prompt (`<tool_response>`, `</tool_response>`, `\n`). */
export interface ToolResponseMarkers {
  open: number;
  close: number;
  newline: number;
}

/** An image's size in pixels, as its header says. */
export interface ImageSize {
  width: number;
  height: number;
}

/** Why a family's image processor would refuse an image (a size it does not take). */
export interface VisionImageError {
  refused: string;
}

/**
 * Where a vision family's image goes in a prompt: in place of the image's block in user or tool
 * content, `start` + one `pad` per image token its processor counts + `end` (token texts).
 */
export interface VisionPlaceholder {
  readonly start: string;
  readonly pad: string;
  readonly end: string;
  /**
   * How many `pad` tokens the family's processor gives an image of this size (its resize rule and
   * patch arithmetic), or why it refuses it. Absent: rollgate does not count this family's image
   * tokens yet, and a turn with an image is refused.
   */
  readonly tokens?: (size: ImageSize) => number | VisionImageError;
}

/** What differs between families in ways a user of the data should know. */
export interface FamilyQuirks {
  /** How tool-call arguments reach the prompt, e.g. "JSON string verbatim" or "XML values". */
  readonly argumentRendering: string;
  /**
   * The template leaves earlier turns' reasoning out of later prompts (after a new user
   * message), so a full re-render differs from the gateway's prompt in retained sampled ids.
   */
  readonly dropsOldReasoning: boolean;
  /** The generation prompt opens reasoning (`<think>\n`): sampled output starts inside it. */
  readonly promptOpensReasoning: boolean;
  /**
   * Where a full render of the history writes an earlier answer differently from the ids the
   * policy sampled for it, besides dropped reasoning (harmony: `<|return|>` becomes `<|end|>`,
   * a call's `to=` moves before the channel). The gateway keeps the sampled ids, so its prompt
   * differs from a re-render there: the family's known non-prefix-stable points. Absent or empty:
   * the full render keeps answers as sampled.
   */
  readonly rewritesAnswers?: readonly string[];
}

/**
 * How sampled turns end, for a family that ends them with more than one id or writes the end id
 * differently in history (harmony: `<|return|>` after the final answer, `<|call|>` after a tool
 * call, `<|end|>` in history). Without it, `ChatFormat.endOfTurn.id` is the only end id.
 */
export interface SampledTurnEnds {
  /** Every id that ends a sampled turn. */
  readonly ids: readonly number[];
  /** The end id the policy would have written to finish `outputIds` (which end without one). */
  endFor(outputIds: readonly number[]): Promise<number>;
  /**
   * Sampled end id → the id a full render of the history writes in its place. Sampled ids stay
   * verbatim in later prompts (the known non-prefix-stable point); an end id the gateway adds
   * itself (never sampled) is written in its history form.
   */
  readonly historyRewrites: ReadonlyMap<number, number>;
}

/** How a family's output is read: complete and streaming. */
export interface OutputFormat {
  /** Complete parser: sampled ids → assistant message (reasoning, content, tool calls). */
  readonly parser: OutputParser;
  /**
   * A fresh streaming parser for one answer. Its deltas are prefixes of what `parser` gives
   * for the final ids (the streaming prefix guarantee, `parsers/stream_parser.ts`).
   */
  streamingParser(): StreamingOutputParser;
}

/** A family bound to a tokenizer: everything the turn path needs. */
export interface ChatFormat extends OutputFormat {
  /** The family's registry name (`qwen3`, `qwen3.5`, `generic`, …). */
  readonly family: string;
  readonly renderer: Renderer;
  /**
   * Every prompt is a full render (an engine renders it: the `engine` family), never a delta:
   * each turn renders its whole history and checks that it extends the previous prompt + output.
   */
  readonly rendersInFull?: boolean;
  /**
   * The id (and text) that ends an assistant turn in history; appended, untrained, when output
   * lacks it (unless the format has `closingMarkers`, or `sampledTurnEnds` says otherwise).
   */
  readonly endOfTurn: { id: number; text: string };
  /**
   * For formats whose assistant turn has no closing token of its own (GLM): the role markers the
   * policy stops on (`<|observation|>` before tool results, `<|user|>` before a user turn). The
   * marker of the message that follows ends the turn: a recorded output that ends with the
   * marker the next prompt's delta starts with shares it, and nothing is ever bridged.
   */
  readonly closingMarkers?: readonly number[];
  /** For families whose sampled turns end with several ids (harmony); see `turnEnd`. */
  readonly sampledTurnEnds?: SampledTurnEnds;
  /** Ids that stop generation. */
  readonly stopTokenIds: readonly number[];
  readonly toolResponseMarkers: ToolResponseMarkers | null;
  readonly quirks: FamilyQuirks;
  /** For a vision family (Qwen3-VL, Inkling, Gemma 4): where an image's tokens go. */
  readonly vision?: VisionPlaceholder;
  /** What the operator should know about this binding (printed when the gateway starts). */
  readonly notes?: readonly string[];
}

/** What `ModelFamily.bind` gets. */
export interface FamilyContext {
  files: ModelFiles;
  tokenizer: TextTokenizer;
  /** Id of an added token such as `<|im_end|>`, if the vocabulary has it. */
  idOf(token: string): number | undefined;
  /** Template variables for every render (`enable_thinking`, `preserve_thinking`, …). */
  templateKwargs: Record<string, unknown>;
  /** The output parser asked for by name (`--tool-parser`); used by the generic family. */
  toolParser?: string;
  /** The engine that renders and parses for the `engine` family. */
  rendering?: EngineRendering;
}

/** A registry entry. */
export interface ModelFamily {
  /** Registry name, as `--model-family` takes it. */
  readonly name: string;
  /** One line for `--help` and errors. */
  readonly summary: string;
  /**
   * The template variables this family reads and the values each takes: what a rollout may set
   * (`template` in `POST /api/rollouts`, checked by `checkTemplateSettings`).
   */
  readonly templateOptions: TemplateOptions;
  /** Whether a model directory belongs to this family (tokenizer_config / template fingerprint). */
  detect(files: ModelFiles): boolean;
  /** Binds the family to a loaded tokenizer; throws `FamilyError` when the files do not fit. */
  bind(ctx: FamilyContext): Promise<ChatFormat>;
}

/** A model directory or flag that no family can serve, with the reason. */
export class FamilyError extends Error {
  override name = "FamilyError";
}

/** The id of `token`, or a `FamilyError` naming the family that needs it. */
export function requireToken(
  ctx: Pick<FamilyContext, "idOf">,
  family: string,
  token: string,
): number {
  const id = ctx.idOf(token);
  if (id === undefined) {
    throw new FamilyError(`${family}: the tokenizer has no added token ${token}`);
  }
  return id;
}

/** How a bound family's turns end, whichever way the family declares it. */
export interface TurnEnd {
  /** Ids that end a sampled assistant turn. */
  readonly ids: readonly number[];
  /**
   * The ids that close `outputIds` in the next prompt (untrained context): `[]` when the output
   * ends with one of `ids`, else its end id in history form.
   */
  bridge(outputIds: readonly number[]): Promise<number[]>;
  /** `outputIds` as a whole sampled turn: with the end id the policy would have written. */
  completed(outputIds: readonly number[]): Promise<number[]>;
  /** Sampled end id → the id a full render writes in its place (see `SampledTurnEnds`). */
  readonly historyRewrites: ReadonlyMap<number, number>;
}

/** The `TurnEnd` of a bound family. */
export function turnEnd(format: Pick<ChatFormat, "endOfTurn" | "sampledTurnEnds">): TurnEnd {
  const sampled: SampledTurnEnds = format.sampledTurnEnds ?? {
    ids: [format.endOfTurn.id],
    endFor: () => Promise.resolve(format.endOfTurn.id),
    historyRewrites: new Map<number, number>(),
  };
  const ended = (ids: readonly number[]) =>
    ids.length > 0 && sampled.ids.includes(ids[ids.length - 1]);
  return {
    ids: sampled.ids,
    historyRewrites: sampled.historyRewrites,
    async bridge(outputIds) {
      if (ended(outputIds)) return [];
      const id = await sampled.endFor(outputIds);
      return [sampled.historyRewrites.get(id) ?? id];
    },
    async completed(outputIds) {
      return ended(outputIds) ? [...outputIds] : [...outputIds, await sampled.endFor(outputIds)];
    },
  };
}
