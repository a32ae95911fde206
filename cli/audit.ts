/**
 * `main.ts audit`: every turn of a rollout re-rendered in full and compared with what the gateway
 * recorded; exit status 1 when a turn does not extend its parent verbatim.
 *
 * @module
 */
import { PolicyModel } from "../model/mod.ts";
import { auditTree, formatAudit } from "../trajectory/mod.ts";
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
    else console.log(formatAudit(report));
    if (report.turns.some((t) => t.extends_parent === false)) status = 1;
  }
  return status;
}
