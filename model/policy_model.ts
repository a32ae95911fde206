/**
 * The policy model's language in one object: tokenizer, chat template, output parser and the
 * special ids the gateway needs. Loaded once per gateway and shared by every rollout.
 *
 * @module
 */
import { ChatTemplate } from "./chat_template.ts";
import type { AssistantMessage, Message, ToolSpec } from "../canonical/mod.ts";
import { loadModelFiles, type ModelFiles, tokenText } from "./model_files.ts";
import {
  type OutputParser,
  type ParsedOutput,
  selectParser,
  type StreamingOutputParser,
  streamingParserFor,
} from "./parsers/mod.ts";
import { renderDelta } from "./render_delta.ts";
import { SegmentEncoder } from "./segment_encoder.ts";
import { SpecialText, type SpecialTextHit } from "./special_text.ts";
import { toTemplateMessages, toTemplateTools } from "./template_input.ts";
import { loadTokenizer, type TextTokenizer } from "./tokenizer.ts";

/** How message content is tokenized. */
export interface RenderOptions {
  /**
   * Special-token text in system, user and tool content becomes plain-text ids, not control ids;
   * the template's own markup keeps its control ids (see `special_text.ts`). Departs from what
   * `transformers` and inference engines do with the same conversation.
   */
  splitSpecialTokens?: boolean;
}

/** A render and its ids, with the special-token text found in the rendered content. */
export interface Rendered {
  text: string;
  ids: number[];
  /** Positions index `ids`; message indices index the rendered messages. */
  specialText: SpecialTextHit[];
}

export interface PolicyModelOptions {
  /** Directory with `tokenizer.json` + `tokenizer_config.json`; default: bundled Qwen3. */
  dir?: string;
  engine?: "auto" | "rust" | "js";
  /** Context window in tokens; default: the config's `model_max_length`. */
  contextLength?: number;
  /** Template variables for every render (e.g. `{ enable_thinking: false }`). */
  templateKwargs?: Record<string, unknown>;
}

export class PolicyModel {
  readonly template: ChatTemplate;
  readonly parser: OutputParser;
  readonly segments: SegmentEncoder;
  /** The end-of-turn token (`<|im_end|>` for Qwen3): appended, untrained, when output lacks it. */
  readonly endOfTurnId: number;
  readonly endOfTurnText: string;
  /** Ids that stop generation. */
  readonly stopTokenIds: number[];
  readonly contextLength: number;
  /** One past the largest id the tokenizer knows (added tokens included). */
  readonly vocabSize: number;
  /** Ids around tool outputs (`<tool_response>`, `</tool_response>`, and the wrapping newline). */
  toolResponseMarkers: { open: number; close: number; newline: number } | null = null;
  readonly #addedTokens = new Map<string, number>();
  /** Special-token text in content: found, escaped, and (split mode) tokenized as text. */
  readonly specialText: SpecialText;
  #splitSegments?: Promise<SegmentEncoder>;

  private constructor(
    readonly files: ModelFiles,
    readonly tokenizer: TextTokenizer,
    readonly templateKwargs: Record<string, unknown> | undefined,
    contextLength: number | undefined,
  ) {
    const config = files.config;
    const added = new Map<string, { id: number; special: boolean }>();
    for (const [id, t] of Object.entries(config.added_tokens_decoder ?? {})) {
      this.#addedTokens.set(t.content, Number(id));
      added.set(t.content, { id: Number(id), special: t.special === true });
    }
    this.specialText = new SpecialText(added);
    this.template = new ChatTemplate(config.chat_template!, config);
    const eos = tokenText(config.eos_token);
    const eosId = eos === null ? undefined : this.idOf(eos);
    if (eos === null || eosId === undefined) {
      throw new Error("tokenizer_config.json needs an eos_token that is an added token");
    }
    this.endOfTurnText = eos;
    this.endOfTurnId = eosId;
    const endOfText = this.idOf("<|endoftext|>");
    this.stopTokenIds = endOfText === undefined || endOfText === eosId
      ? [eosId]
      : [eosId, endOfText];
    const turnStart = config.chat_template!.includes("<|im_start|>") ? "<|im_start|>" : eos;
    this.segments = new SegmentEncoder(tokenizer, turnStart);
    this.parser = selectParser({
      template: config.chat_template!,
      idOf: (t) => this.idOf(t),
      endOfTurn: this.stopTokenIds,
      decode: (ids) => tokenizer.decode(ids),
    });
    this.contextLength = contextLength ?? config.model_max_length ?? 32768;
    this.vocabSize = tokenizer.vocabSize;
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
    const model = new PolicyModel(files, tokenizer, options.templateKwargs, options.contextLength);
    const open = model.idOf("<tool_response>"), close = model.idOf("</tool_response>");
    const newline = await tokenizer.encode("\n");
    if (open !== undefined && close !== undefined && newline.length === 1) {
      model.toolResponseMarkers = { open, close, newline: newline[0] };
    }
    return model;
  }

  /** Id of an added token such as `<|im_end|>`. */
  idOf(token: string): number | undefined {
    return this.#addedTokens.get(token);
  }

  /** Full render of a conversation with the generation prompt, and its ids. */
  renderFull(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    addGenerationPrompt = true,
    options: RenderOptions = {},
  ): Promise<Rendered> {
    const templateTools = toTemplateTools(tools);
    return this.#encode(
      messages,
      options,
      (ms) =>
        this.template.render(toTemplateMessages(ms), templateTools, {
          addGenerationPrompt,
          kwargs: this.templateKwargs,
        }),
    );
  }

  /** Ids the template appends after a finished assistant turn for `newMessages` + generation prompt. */
  renderDeltaIds(newMessages: readonly Message[], options: RenderOptions = {}): Promise<Rendered> {
    return this.#encode(
      newMessages,
      options,
      (ms) => renderDelta(this.template, this.endOfTurnText, ms, this.templateKwargs),
    );
  }

  /**
   * Renders and tokenizes. Content without special-token text takes the plain path. With some, a
   * second render with the text escaped tells content from markup: in the default mode it only
   * locates the control ids content produced (the ids are the plain path's); in the split mode
   * its ids are the result.
   */
  async #encode(
    messages: readonly Message[],
    options: RenderOptions,
    render: (messages: readonly Message[]) => string,
  ): Promise<Rendered> {
    const hits = this.specialText.find(messages);
    if (hits.length === 0) {
      const text = render(messages);
      return { text, ids: await this.segments.encode(text), specialText: [] };
    }
    const escaped = render(this.specialText.escape(messages));
    if (options.splitSpecialTokens) {
      const ids = await (await this.#splitSegmentEncoder()).encode(escaped);
      return { text: this.specialText.restore(escaped), ids, specialText: hits };
    }
    const text = render(messages);
    const ids = await this.segments.encode(text);
    const positions = this.specialText.locate(escaped, ids, hits);
    return { text, ids, specialText: hits.map((h, i) => ({ ...h, position: positions[i] })) };
  }

  /** The segment encoder of the split mode, loaded on first use (its own segment cache). */
  #splitSegmentEncoder(): Promise<SegmentEncoder> {
    return this.#splitSegments ??= loadTokenizer(this.files, this.tokenizer.engine, {
      withoutAddedTokens: true,
    }).then((plain) =>
      new SegmentEncoder(this.specialText.splitEncoder(plain), this.segments.turnStart)
    );
  }

  /**
   * The ids the template renders for an assistant message as an earlier turn (followed by a tool
   * result, as inside a tool loop), through its end-of-turn token: what a full re-render would put
   * where the sampled ids are. Cost follows the message, not the history.
   */
  async renderAnswerIds(message: AssistantMessage): Promise<number[]> {
    const prefix = this.template.render([{ role: "user", content: "." }], [], {
      addGenerationPrompt: true,
      kwargs: this.templateKwargs,
    });
    const text = this.template.render(
      toTemplateMessages([
        { role: "user", content: "." },
        message,
        { role: "tool", content: ".", tool_call_id: "_" },
      ]),
      [],
      { addGenerationPrompt: false, kwargs: this.templateKwargs },
    );
    const end = text.indexOf(this.endOfTurnText, prefix.length);
    if (!text.startsWith(prefix) || end < 0) return [];
    return await this.segments.encode(text.slice(prefix.length, end + this.endOfTurnText.length));
  }

  /** A parser for one answer's ids as they stream in (deltas safe to show before the end). */
  streamingParser(): StreamingOutputParser {
    return streamingParserFor(this.parser, this);
  }

  parse(ids: readonly number[], newToolCallId: () => string): Promise<ParsedOutput> {
    return this.parser.parse(ids, newToolCallId);
  }

  decode(ids: number[]): Promise<string> {
    return this.tokenizer.decode(ids);
  }
}
