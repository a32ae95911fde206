/**
 * What a rollout looks like from outside: the turn tree export and its compact form (every id
 * once), the shared-prefix tree, import of an exported tree, the audit of rendered prompts and
 * the text view `rollgate inspect` prints.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { compactTurnTree, expandCompactTree, turnTree } from "./mod.ts";
 * import { RolloutStore } from "../mod.ts";
 *
 * const rollout = new RolloutStore().create({ id: "example" });
 * assert.deepEqual(expandCompactTree(compactTurnTree(rollout)), turnTree(rollout));
 * ```
 *
 * @module
 */
export { auditTree, formatAudit } from "./audit.ts";
export { type CompactTreeExport, compactTurnTree, expandCompactTree } from "./compact_tree.ts";
export { formatTree } from "./inspect.ts";
export { rolloutFromTree, TreeImportError } from "./tree_import.ts";
export {
  type SharedPrefixTree,
  sharedPrefixTree,
  type TurnRecord,
  turnTree,
  type TurnTreeExport,
} from "./tree_export.ts";
