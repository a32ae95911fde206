/**
 * `main.ts inspect`: a rollout's chains, labels, turns and masked spans, readably (or as JSON).
 *
 * @module
 */
import { formatTree } from "../trajectory/mod.ts";
import { loadSource, treeVerbArgs } from "./tree_source.ts";

export const INSPECT_USAGE =
  `usage: main.ts inspect <rollout id | tree file>… [--gateway URL] [--json]

  Prints each rollout's chains, labels, turns and masked spans; --json prints the tree export and
  the samples instead. A rollout id is read from a running gateway (--gateway, env ROLLGATE_URL,
  default http://127.0.0.1:7860; ROLLGATE_ADMIN_TOKEN when it has one); a tree file is a saved
  GET /api/rollouts/:id/tree (or inspect --json).`;

/** Exit status 0 after `--help`; `undefined` otherwise (the process ends once it printed). */
export async function inspect(args: string[]): Promise<number | undefined> {
  const parsed = treeVerbArgs("inspect", args);
  if (!parsed) {
    console.log(INSPECT_USAGE);
    return 0;
  }
  const { values, positionals, gateway } = parsed;
  for (const target of positionals) {
    const { tree, samples } = await loadSource(target, gateway);
    console.log(values.json ? JSON.stringify({ tree, samples }) : formatTree(tree, samples));
  }
  return undefined;
}
