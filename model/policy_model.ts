/**
 * The policy model's language in one object: tokenizer, model family (renderer, output parser,
 * special ids) and context length. Loaded once per gateway and shared by every rollout.
 *
 * @module
 */
import { ChatTemplate } from "./chat_template.ts";
import {
  type AnswerInPlace,
  bindFamily,
  type ChatFormat,
  checkTemplateSettings,
  chooseFamily,
  closedOutput,
  type DeltaHistory,
  type EngineRendering,
  familyNamed,
  joinTurn,
  type Rendered,
  type RenderOptions,
  type TurnEnd,
  turnEnd,
  type TurnJoin,
} from "./families/mod.ts";
import type { AssistantMessage, Message, ToolSpec } from "../canonical/mod.ts";
import { addedTokenIds, loadModelFiles, type ModelFiles } from "./model_files.ts";
import type {
  OutputParser,
  ParseContext,
  ParsedOutput,
  StreamingOutputParser,
} from "./parsers/mod.ts";
import { loadTokenizer, type TextTokenizer } from "./tokenizer.ts";

export interface PolicyModelOptions {
  /** Directory with `tokenizer.json` + `tokenizer_config.json`; default: bundled Qwen3. */
  dir?: string;
  engine?: "auto" | "rust" | "js";
  /** Context window in tokens; default: the config's `model_max_length`. */
  contextLength?: number;
  /** Template variables for every render (e.g. `{ enable_thinking: false }`). */
  templateKwargs?: Record<string, unknown>;
  /** Model family by name (`--model-family`); default: detected from the model directory. */
  family?: string;
  /** Output parser of the generic family (`--tool-parser`). */
  toolParser?: string;
  /** The engine that renders and parses for the `engine` family (`--render-url`). */
  rendering?: EngineRendering;
}

/** How many template variants a model keeps bound (`withTemplate`). */
const MAX_TEMPLATE_VARIANTS = 64;

export class PolicyModel {
  /** The model directory's own Jinja chat template, if it has one. */
  readonly template: ChatTemplate | null;
  /** One past the largest id the tokenizer knows (added tokens included). */
  readonly vocabSize: number;
  readonly contextLength: number;
  /** How the family's turns end: sampled end ids, the bridge, history rewrites. */
  readonly turnEnd: TurnEnd;
  readonly #addedTokens: Map<string, number>;
  /** This model bound with other template settings, by their key (`withTemplate`). */
  readonly #variants = new Map<string, Promise<PolicyModel>>();

  private constructor(
    readonly files: ModelFiles,
    readonly tokenizer: TextTokenizer,
    /** The model family bound to this tokenizer: renderer, parsers, special ids, quirks. */
    readonly format: ChatFormat,
    readonly templateKwargs: Record<string, unknown> | undefined,
    contextLength: number | undefined,
    readonly toolParser?: string,
    readonly rendering?: EngineRendering,
  ) {
    const config = files.config;
    this.#addedTokens = addedTokenIds(config);
    this.template = typeof config.chat_template === "string"
      ? new ChatTemplate(config.chat_template, config)
      : null;
    this.contextLength = contextLength ?? config.model_max_length ?? 32768;
    this.vocabSize = tokenizer.vocabSize;
    this.turnEnd = turnEnd(format);
  }

  /**
   * @example
   * ```ts
   * const model = await PolicyModel.load();
   * const { ids } = await model.renderFull([{ role: "user", content: "hi" }], []);
   * // [151644, 872, 198, 6023, 151645, 198, 151644, 77091, 198]
   * ```
   */
  static async load(options: PolicyModelOptions = {}): Promise<PolicyModel> {
    const files = await loadModelFiles(options.dir);
    const tokenizer = await loadTokenizer(files, options.engine);
    const format = await bindFamily({
      files,
      tokenizer,
      family: options.family,
      toolParser: options.toolParser,
      templateKwargs: options.templateKwargs,
      rendering: options.rendering,
    });
    return new PolicyModel(
      files,
      tokenizer,
      format,
      options.templateKwargs,
      options.contextLength,
      options.toolParser,
      options.rendering,
    );
  }

  /**
   * What {@link load} would refuse that the model files alone tell (a directory without them, an
   * unknown family or tool parser, a directory no family serves), found without loading the
   * tokenizer: tens of milliseconds, so a command line is checked before a port is bound.
   *
   * @example
   * ```ts
   * await PolicyModel.check({ family: "qwen3.6" }); // the bundled files fit
   * await PolicyModel.check({ family: "qwen9" }).catch((e) => e.message);
   * // "unknown model family qwen9; known: gpt-oss, …"
   * ```
   */
  static async check(options: PolicyModelOptions = {}): Promise<void> {
    chooseFamily(await loadModelFiles(options.dir), options.family, options.toolParser);
  }

  /**
   * This model with a rollout's template settings merged over the gateway's `templateKwargs`:
   * the same tokenizer and family, the family bound again with the merged variables (once per
   * distinct settings). No settings: this model.
   *
   * @throws TemplateSettingError for a variable the family does not read or a value it does not
   *   take (checked against `ModelFamily.templateOptions`)
   */
  withTemplate(settings: Readonly<Record<string, unknown>>): Promise<PolicyModel> {
    const keys = Object.keys(settings).sort();
    if (keys.length === 0) return Promise.resolve(this);
    try {
      checkTemplateSettings(this.family, familyNamed(this.family)!.templateOptions, settings);
    } catch (e) {
      return Promise.reject(e);
    }
    const key = JSON.stringify(keys.map((k) => [k, settings[k]]));
    const known = this.#variants.get(key);
    if (known) return known;
    const templateKwargs = { ...this.templateKwargs, ...settings };
    const variant = bindFamily({
      files: this.files,
      tokenizer: this.tokenizer,
      family: this.family,
      toolParser: this.toolParser,
      templateKwargs,
      rendering: this.rendering,
    }).then((format) =>
      new PolicyModel(
        this.files,
        this.tokenizer,
        format,
        templateKwargs,
        this.contextLength,
        this.toolParser,
        this.rendering,
      )
    );
    // Free-text settings (gpt-oss's date) could grow this without end: past a bound, bind anew.
    if (this.#variants.size < MAX_TEMPLATE_VARIANTS) {
      this.#variants.set(key, variant);
      variant.catch(() => this.#variants.delete(key));
    }
    return variant;
  }

  /** The family's registry name (`qwen3`, `qwen3.5`, `generic`, …). */
  get family(): string {
    return this.format.family;
  }

  get parser(): OutputParser {
    return this.format.parser;
  }

  /** Every prompt is a full render by the engine, checked against the previous prompt + output. */
  get rendersInFull(): boolean {
    return this.format.rendersInFull === true;
  }

  /**
   * The token that ends a turn in history (`<|im_end|>` for Qwen3, `<|end|>` for harmony); what
   * ends sampled turns and what closes output without it: `turnEnd`.
   */
  get endOfTurnId(): number {
    return this.format.endOfTurn.id;
  }

  get endOfTurnText(): string {
    return this.format.endOfTurn.text;
  }

  /** Ids that stop generation. */
  get stopTokenIds(): number[] {
    return [...this.format.stopTokenIds];
  }

  /** Ids around tool outputs (`<tool_response>`, `</tool_response>`, and the wrapping newline). */
  get toolResponseMarkers(): ChatFormat["toolResponseMarkers"] {
    return this.format.toolResponseMarkers;
  }

  /** Id of an added token such as `<|im_end|>`. */
  idOf(token: string): number | undefined {
    return this.#addedTokens.get(token);
  }

  /**
   * Full render of a conversation with the generation prompt, its ids, and the special-token
   * text of its content (`options.splitSpecialTokens`: tokenized as text).
   */
  renderFull(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    addGenerationPrompt = true,
    options: RenderOptions = {},
  ): Promise<Rendered> {
    return this.format.renderer.renderFull(messages, tools, addGenerationPrompt, options);
  }

  /** Ids the template appends after a finished assistant turn for `newMessages` + generation prompt. */
  renderDeltaIds(
    newMessages: readonly Message[],
    tools: readonly ToolSpec[] = [],
    options: RenderOptions = {},
    history?: DeltaHistory,
  ): Promise<Rendered> {
    return this.format.renderer.renderDelta(newMessages, tools, options, history);
  }

  /**
   * The ids the template renders for an assistant message as an earlier turn (followed by a tool
   * result, as inside a tool loop), through its end-of-turn token: what a full re-render would put
   * where the sampled ids are. Cost follows the message, not the history.
   */
  renderAnswerIds(message: AssistantMessage): Promise<number[]> {
    return this.format.renderer.renderAnswer(message);
  }

  /**
   * Where a full render departs from the generation prompt before `message` (drift). Null for a
   * family that declares such rewrites (`quirks.rewritesAnswers`, Kimi K2.5's `<think>` text
   * joined with every answer): its known non-prefix-stable point, reported as the family's, not
   * per turn.
   */
  async renderAnswerInPlace(message: AssistantMessage): Promise<AnswerInPlace | null> {
    if (this.format.quirks.rewritesAnswers?.length) return null;
    return await this.format.renderer.renderAnswerInPlace?.(message) ?? null;
  }

  /**
   * The ids between a recorded output and the next prompt's delta: the end-of-turn id the output
   * lacked (bridged, untrained), or, for formats closed by the next role marker (GLM), the delta
   * without the marker the output already sampled.
   */
  joinTurn(outputIds: readonly number[], deltaIds: number[]): Promise<TurnJoin> {
    return joinTurn(this.format, this.turnEnd, outputIds, deltaIds);
  }

  /** `outputIds` closed as `renderAnswerIds` closes the answer (what drift compares). */
  closedOutput(outputIds: readonly number[], answerIds: readonly number[]): Promise<number[]> {
    return closedOutput(this.format, this.turnEnd, outputIds, answerIds);
  }

  /** A parser for one answer's ids as they stream in (deltas safe to show before the end). */
  streamingParser(): StreamingOutputParser {
    return this.format.streamingParser();
  }

  parse(
    ids: readonly number[],
    newToolCallId: () => string,
    tools?: readonly ToolSpec[],
    context?: ParseContext,
  ): Promise<ParsedOutput> {
    return this.format.parser.parse(ids, newToolCallId, tools, context);
  }

  decode(ids: number[]): Promise<string> {
    return this.tokenizer.decode(ids);
  }
}
