/**
 * Output parsers by name, for a model directory that no family claims (`--tool-parser NAME`,
 * the generic family). Names follow vLLM's tool parsers where one exists.
 *
 * @module
 */
import { PlainParser, PlainStreamParser } from "../parsers/mod.ts";
import { FamilyError, type OutputFormat, requireToken } from "./family.ts";
import { type OutputContext, outputThinkIds } from "./jinja_format.ts";
import { harmonyIds, harmonyOutputFormat } from "./gpt_oss/mod.ts";
import { deepSeekOutputFormat, DS } from "./deepseek_v31/mod.ts";
import { glmOutputFormat } from "./glm/mod.ts";
import { kimiK2OutputFormat } from "./kimi_k2/mod.ts";
import { hermesOutputFormat } from "./qwen3/mod.ts";
import { xmlToolCallOutput } from "./qwen3_coder/mod.ts";

/** GLM's output under a template rollgate does not know (`<think>` if the template has it). */
function glmOutput(ctx: OutputContext): OutputFormat {
  return glmOutputFormat(
    {
      ...outputThinkIds(ctx),
      toolCall: requireToken(ctx, "glm45", "<tool_call>"),
      stop: ctx.endOfTurn,
    },
    ctx.promptOpensReasoning,
    ctx.decode,
  );
}

export interface ToolParser {
  readonly name: string;
  readonly summary: string;
  /** The text that starts a tool call in this format: counted as malformed by `none`. */
  readonly marker: string | null;
  create(ctx: OutputContext): OutputFormat;
}

const formats: ToolParser[] = [
  {
    name: "hermes",
    summary: 'Qwen3/Qwen2.5/Hermes: <tool_call>{"name": …, "arguments": {…}}</tool_call>',
    marker: "<tool_call>",
    create: hermesOutputFormat,
  },
  {
    name: "qwen3_coder",
    summary: "Qwen3-Coder/3.5/3.6: <tool_call><function=NAME><parameter=KEY>…",
    marker: "<function=",
    create: xmlToolCallOutput,
  },
  {
    name: "glm45",
    summary: "GLM-4.5/4.6/4.7/5.x: <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>…",
    marker: "<arg_key>",
    create: glmOutput,
  },
  {
    name: "kimi_k2",
    summary: "Kimi K2: <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX…",
    marker: "<|tool_calls_section_begin|>",
    create: (ctx) =>
      kimiK2OutputFormat(
        requireToken(ctx, "kimi_k2", "<|tool_calls_section_begin|>"),
        ctx.endOfTurn,
        ctx.decode,
      ),
  },
  {
    name: "openai",
    summary: "gpt-oss (harmony): <|channel|>commentary to=functions.NAME <|constrain|>json" +
      "<|message|>{…}<|call|>",
    marker: "to=functions.",
    create: (ctx) => harmonyOutputFormat(harmonyIds(ctx.idOf, "openai tool parser"), ctx.decode),
  },
  {
    name: "deepseek_v31",
    summary: "DeepSeek V3.1: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}…",
    marker: DS.callsBegin,
    create: (ctx) =>
      deepSeekOutputFormat(
        {
          ...outputThinkIds(ctx),
          callsBegin: requireToken(ctx, "deepseek_v31", DS.callsBegin),
          endOfTurn: ctx.endOfTurn,
        },
        ctx.decode,
      ),
  },
];

/** Text only; anything in a known tool-call markup is counted as a malformed call. */
const none: ToolParser = {
  name: "none",
  summary: "no tool calls: all output is text (known tool-call markup is counted as malformed)",
  marker: null,
  create: (ctx) => {
    const markers = formats.flatMap((p) => (p.marker ? [p.marker] : []));
    const endOfTurn = [...ctx.endOfTurn];
    return {
      parser: new PlainParser(endOfTurn, ctx.decode, markers),
      streamingParser: () => new PlainStreamParser(endOfTurn, ctx.decode),
    };
  },
};

export const TOOL_PARSERS: readonly ToolParser[] = [...formats, none];

/** The parser named `name`, or undefined. */
export function toolParserNamed(name: string): ToolParser | undefined {
  return TOOL_PARSERS.find((p) => p.name === name);
}

/** The parser named `name`; a `FamilyError` listing the known ones when there is none. */
export function requireToolParser(name: string): ToolParser {
  const parser = toolParserNamed(name);
  if (parser) return parser;
  throw new FamilyError(
    `unknown tool parser ${name}; known: ${TOOL_PARSERS.map((p) => p.name).join(", ")}`,
  );
}
