/**
 * The rollout's message tree: every message once, each request's history mounted on the path it
 * matches. A re-sent history matches by semantic equality ({@link sameMessage}: tool arguments as
 * parsed JSON, keys in any order); where one departs from a recorded history,
 * {@link messageChange} names the first differing message and field (a `rewrite`'s evidence).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { messageChange, sameMessage } from "./mod.ts";
 *
 * const call = (args: string) => ({
 *   role: "assistant" as const,
 *   content: "",
 *   tool_calls: [{ id: "c1", name: "Bash", arguments: args }],
 * });
 * assert.ok(sameMessage(call('{"a":1,"b":2}'), call('{"b":2,"a":1}')));
 * const change = messageChange(1, call('{"command":"ls"}'), call('{"command":"ls -a"}'));
 * assert.equal(change.path, "tool_calls[0].arguments.command");
 * ```
 *
 * @module
 */
export { messageChange } from "./history_change.ts";
export { type KnownHistory, MessageNode, type Mount, TurnTree } from "./turn_tree.ts";
export { sameForm, sameMessage } from "./same_message.ts";
