/**
 * The sandbox side of the bridge: `forwarder.py` (Python stdlib only) runs inside a sandbox with
 * no network, listens on `127.0.0.1:8787` and pipes every connection to the rollout's gateway
 * socket. Every backend that bind-mounts the socket (local bubblewrap, Docker) puts both in
 * {@link BRIDGE_DIR} and starts it with {@link START_FORWARDER}.
 *
 * @module
 */

/** Port the in-sandbox forwarder listens on: the agent's gateway is `http://127.0.0.1:8787`. */
export const FORWARDER_PORT = 8787;

/** The forwarder script on the host, copied or bind-mounted into a sandbox. */
export const FORWARDER_SCRIPT = new URL("./forwarder.py", import.meta.url).pathname;

/** Where the bridge appears inside a sandbox: `forwarder.py` and the socket `gw.sock`. */
export const BRIDGE_DIR = "/run/rollgate";

/** Starts the forwarder inside; exits 0 only once the port accepts connections. */
export const START_FORWARDER =
  `python3 ${BRIDGE_DIR}/forwarder.py ${FORWARDER_PORT} ${BRIDGE_DIR}/gw.sock`;
