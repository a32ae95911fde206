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

export const AUDIT_USAGE =
  `usage: main.ts audit <rollout id | tree file>… [--gateway URL] [--json] [model flags as serve]

  Renders every turn of each rollout in full with the policy's model files and compares it with
  what the gateway recorded; exit status 1 when a turn does not extend its parent verbatim. The
  model flags (--model-dir, --model-family, --tool-parser, --template-kwargs) must be the
  gateway's. Rollout ids and tree files are read as inspect reads them (main.ts inspect --help).`;

/** Exit status 1 when any turn does not extend its parent verbatim (0 after `--help`). */
export async function audit(args: string[]): Promise<number> {
  const parsed = treeVerbArgs("audit", args);
  if (!parsed) {
    console.log(AUDIT_USAGE);
    return 0;
  }
  const { values, positionals, gateway } = parsed;
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
