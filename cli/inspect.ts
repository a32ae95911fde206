/**
 * `main.ts inspect`: a rollout's chains, labels, turns and masked spans, readably (or as JSON).
 *
 * @module
 */
import { formatTree } from "../trajectory/mod.ts";
import { loadSource, treeVerbArgs } from "./tree_source.ts";

export async function inspect(args: string[]): Promise<void> {
  const { values, positionals, gateway } = treeVerbArgs(args);
  for (const target of positionals) {
    const { tree, samples } = await loadSource(target, gateway);
    console.log(values.json ? JSON.stringify({ tree, samples }) : formatTree(tree, samples));
  }
}
