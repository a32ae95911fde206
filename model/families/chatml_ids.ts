/**
 * The ids ChatML-style families share: a turn ends with the end-of-turn token (`<|im_end|>`),
 * `<|endoftext|>` also stops generation, and tool outputs sit between `<tool_response>` and
 * `</tool_response>` on lines of their own.
 *
 * @module
 */
import type { FamilyContext, ToolResponseMarkers } from "./family.ts";
import { requireToken } from "./family.ts";

export interface TurnIds {
  endOfTurn: { id: number; text: string };
  /** The end-of-turn id, and `<|endoftext|>` when the vocabulary has it. */
  stopTokenIds: number[];
  toolResponseMarkers: ToolResponseMarkers | null;
}

/**
 * @param endOfTurn the token text that ends an assistant turn
 * @param family for errors
 */
export async function turnIds(
  ctx: FamilyContext,
  family: string,
  endOfTurn: string,
): Promise<TurnIds> {
  const id = requireToken(ctx, family, endOfTurn);
  const endOfText = ctx.idOf("<|endoftext|>");
  const open = ctx.idOf("<tool_response>"), close = ctx.idOf("</tool_response>");
  const newline = await ctx.tokenizer.encode("\n");
  return {
    endOfTurn: { id, text: endOfTurn },
    stopTokenIds: endOfText === undefined || endOfText === id ? [id] : [id, endOfText],
    toolResponseMarkers: open !== undefined && close !== undefined && newline.length === 1
      ? { open, close, newline: newline[0] }
      : null,
  };
}
