/**
 * What every family's output parser shares: the contracts (`OutputParser`,
 * `StreamingOutputParser`), the incremental decoder that streams settled text, and the plain
 * parser for output without a known format. Family-specific parsers live with their family
 * (`../families/`).
 *
 * @module
 */
export type {
  OutputParser,
  ParsedOutput,
  StreamDeltas,
  StreamingOutputParser,
} from "./output_parser.ts";
export { IncrementalDecoder } from "./incremental_decoder.ts";
export { PlainParser, PlainStreamParser } from "./plain.ts";
