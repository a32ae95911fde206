/**
 * The `engine` family's output: sampled ids read back by the engine's own parsers (vLLM's tool
 * parser and reasoning parser, whichever it was started with), whichever backend sampled them (a
 * trainer's ids through the gate included). The engine reports no malformed calls (text it does
 * not parse as a call stays content) and no reasoning ids, so `reasoningTokens` is the reasoning
 * text's length in ids. Nothing streams: the answer is sent whole once it is parsed.
 *
 * @module
 */
import type { AssistantMessage, ToolSpec } from "../../../canonical/mod.ts";
import type {
  OutputParser,
  ParseContext,
  ParsedOutput,
  StreamDeltas,
  StreamingOutputParser,
} from "../../parsers/mod.ts";
import type { TextTokenizer } from "../../tokenizer.ts";
import type { EngineRendering } from "../engine_rendering.ts";

export class EngineOutputParser implements OutputParser {
  readonly name = "engine";

  constructor(
    readonly engine: EngineRendering,
    readonly templateKwargs: Readonly<Record<string, unknown>>,
    /** Ids that end a turn: taken off the end before parsing (they are not content). */
    readonly endOfTurn: readonly number[],
    readonly tokenizer: Pick<TextTokenizer, "encode">,
  ) {}

  async parse(
    ids: readonly number[],
    newToolCallId: () => string,
    tools: readonly ToolSpec[] = [],
    context: ParseContext = {},
  ): Promise<ParsedOutput> {
    let end = ids.length;
    while (end > 0 && this.endOfTurn.includes(ids[end - 1])) end--;
    if (end === 0) {
      return {
        message: { role: "assistant", content: "" },
        malformedToolCalls: 0,
        reasoningTokens: 0,
      };
    }
    const answer = await this.engine.parse({
      promptIds: context.promptIds ?? [],
      outputIds: end === ids.length ? ids : ids.slice(0, end),
      tools,
      templateKwargs: this.templateKwargs,
    });
    const message: AssistantMessage = { role: "assistant", content: answer.content };
    if (answer.reasoning) message.reasoning_content = answer.reasoning;
    if (answer.toolCalls.length > 0) {
      message.tool_calls = answer.toolCalls.map((c) => ({ id: newToolCallId(), ...c }));
    }
    const reasoningTokens = answer.reasoning
      ? (await this.tokenizer.encode(answer.reasoning)).length
      : 0;
    return { message, malformedToolCalls: 0, reasoningTokens };
  }
}

/** Streams nothing: everything is held back for the complete parse. */
export class HeldBackStream implements StreamingOutputParser {
  push(_ids: number[]): Promise<StreamDeltas> {
    return Promise.resolve({ reasoning: "", text: "" });
  }
}
