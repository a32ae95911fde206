/**
 * `main.ts audit`: every turn of a rollout re-rendered in full and compared with what the gateway
 * recorded; exit status 1 when a turn does not extend its parent verbatim.
 *
 * @module
 */
import { PolicyModel } from "../model/mod.ts";
import { auditTree } from "../trajectory/mod.ts";
import { modelOptions } from "./model_flags.ts";
import { loadSource, treeVerbArgs } from "./tree_source.ts";

/** Exit status 1 when any turn does not extend its parent verbatim. */
export async function audit(args: string[]): Promise<number> {
  const { values, positionals, gateway } = treeVerbArgs(args);
  const model = await PolicyModel.load(modelOptions(values));
  let status = 0;
  for (const target of positionals) {
    const report = await auditTree(model, (await loadSource(target, gateway)).tree);
    if (values.json) console.log(JSON.stringify(report));
    else {
      for (const t of report.turns) {
        const diff = t.first_difference;
        console.log(
          `${t.turn} [${t.branch}] prompt ${t.prompt_length}: ` +
            (t.equals_full_render ? "equals full render" : `differs at ${diff!.position}` +
              (diff!.inside_sampled_output ? " (inside kept sampled ids)" : "") +
              `\n    gateway:     ${JSON.stringify(diff!.gateway)}\n    full render: ${
                JSON.stringify(diff!.full_render)
              }`) +
            (t.extends_parent === null
              ? ""
              : t.extends_parent
              ? "; extends parent verbatim"
              : "; DOES NOT extend parent") +
            (t.drift ? `; drift at output[${t.drift.position}]` : "") +
            (t.malformed_tool_calls
              ? `; ${t.malformed_tool_calls} malformed tool calls (answered as text)`
              : ""),
        );
      }
      console.log(report.summary);
    }
    if (report.turns.some((t) => t.extends_parent === false)) status = 1;
  }
  return status;
}
