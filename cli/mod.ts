/**
 * The command line's verbs.
 *
 * @module
 */
export { audit, inspect, loadSource } from "./trajectory_verbs.ts";
