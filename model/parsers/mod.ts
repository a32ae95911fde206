/**
 * What every family's output parser shares: the contracts (`OutputParser`,
 * `StreamingOutputParser`), the incremental decoder that streams settled text, and the plain
 * parser for output without a known format. Family-specific parsers live with their family
 * (`../families/`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PlainParser } from "./mod.ts";
 *
 * const words = ["Hello", ",", " world", "<end>"];
 * const decode = (ids: number[]) => Promise.resolve(ids.map((i) => words[i]).join(""));
 * const parser = new PlainParser([3], decode);
 * const { message } = await parser.parse([0, 1, 2, 3]);
 * assert.deepEqual(message, { role: "assistant", content: "Hello, world" });
 * ```
 *
 * @module
 */
export type {
  OutputParser,
  ParseContext,
  ParsedOutput,
  StreamDeltas,
  StreamingOutputParser,
} from "./output_parser.ts";
export { IncrementalDecoder } from "./incremental_decoder.ts";
export { PlainParser, PlainStreamParser } from "./plain.ts";
