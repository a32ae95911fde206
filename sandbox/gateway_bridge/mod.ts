/**
 * The gateway bridge shared by the sandbox backends that cut the network (local bubblewrap,
 * Docker with `gateway-only`): one Unix socket per rollout on the host serving the gateway
 * (`gateway_socket.ts`), and a forwarder inside exposing it as `http://127.0.0.1:8787`
 * (`forwarder.ts`, `forwarder.py`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { serveRolloutSocket, START_FORWARDER } from "./mod.ts";
 *
 * const dir = await Deno.makeTempDir();
 * const socket = serveRolloutSocket({
 *   path: `${dir}/gw.sock`,
 *   rolloutId: "r1",
 *   fetch: () => new Response("ok"),
 * });
 * assert.match(START_FORWARDER, /forward/); // what the sandbox runs before the agent
 * await socket.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @module
 */
export { type RolloutSocket, rolloutSocketHandler, serveRolloutSocket } from "./gateway_socket.ts";
export { BRIDGE_DIR, FORWARDER_PORT, FORWARDER_SCRIPT, START_FORWARDER } from "./forwarder.ts";
