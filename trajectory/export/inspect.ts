/**
 * A readable view of a rollout's tree for `main.ts inspect`: chains with labels and evidence,
 * turns with token counts, and per sample the spans that carry loss or SFT weight.
 *
 * @module
 */
import { describeSpecialText, DRIFT_NOTE } from "./audit.ts";
import type { Sample } from "../samples/mod.ts";
import type { TurnTreeExport } from "./tree_export.ts";

/** `[start, end)` runs of 1s in a mask. */
export function spans(mask: ArrayLike<number>): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < mask.length; i++) {
    if (mask[i] !== 1) continue;
    const start = i;
    while (i < mask.length && mask[i] === 1) i++;
    out.push([start, i]);
  }
  return out;
}

function showSpans(mask: ArrayLike<number>): string {
  const s = spans(mask);
  if (s.length === 0) return "none";
  const shown = s.slice(0, 6).map(([a, b]) => `[${a},${b})`).join(" ");
  return s.length > 6 ? `${shown} … (${s.length} spans)` : shown;
}

export function formatTree(tree: TurnTreeExport, samples: readonly Sample[] = []): string {
  const r = tree.rollout as Record<string, unknown>;
  const lines = [
    `rollout ${r.id} (${r.status}, reward ${
      r.reward ?? "none"
    }): ${tree.chains.length} chains, ${tree.turns.length} turns`,
  ];
  for (const chain of tree.chains) {
    const from = chain.parent === null ? "" : ` ← chain ${chain.parent}`;
    lines.push(`chain ${chain.id} ${chain.label}${from}: ${JSON.stringify(chain.evidence)}`);
    for (const t of tree.turns.filter((t) => t.chain === chain.id)) {
      const calls = t.answer?.tool_calls?.map((c) => c.name).join(", ");
      const extras = [
        t.retries ? `${t.retries} retries` : "",
        t.drift ? `drift at output[${t.drift.position}] (sampled ids kept)` : "",
        t.special_text?.length
          ? `${t.special_text.length} special-token text in content: ${
            describeSpecialText(t.special_text)
          }`
          : "",
        t.tool_spans.length ? `${t.tool_spans.length} tool outputs` : "",
        t.malformed_tool_calls ? `${t.malformed_tool_calls} malformed tool calls` : "",
        calls ? `calls ${calls}` : "",
        t.error ? `error: ${t.error}` : "",
      ].filter(Boolean).join("; ");
      lines.push(
        `  ${t.id} ${t.mount} ${t.status}: prompt ${t.prompt_ids.length} ids ` +
          `(${t.rendered_messages} messages rendered), output ${t.output_ids.length} ids` +
          `${t.finish_reason ? ` (${t.finish_reason})` : ""}${extras ? ` — ${extras}` : ""}`,
      );
    }
  }
  for (const s of samples) {
    const loss = s.loss_mask.reduce((a, b) => a + b, 0);
    const from = s.trained_from > 0
      ? `, trained from ${s.trained_from} (before: shared with chain ${s.parent?.chain})`
      : "";
    lines.push(
      `sample ${s.index} ${s.branch} chain ${s.chain}: ${s.input_ids.length} ids, ${loss} with loss ` +
        `${showSpans(s.loss_mask)}${from}, sft ${showSpans(s.sft_mask)}, reward ${
          s.reward ?? "none"
        }`,
    );
  }
  if (tree.turns.some((t) => t.drift)) lines.push(DRIFT_NOTE);
  return lines.join("\n");
}
