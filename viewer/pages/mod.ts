/**
 * The viewer's pages and the pieces they share, as Hono JSX components (server-rendered; the
 * page script in `../assets/` does the rest).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { servedLinks } from "./mod.ts";
 *
 * // The pages link to each other through `Links`: served under a base path, or inside one file.
 * const links = servedLinks("/ui");
 * assert.equal(links.runs(), "/ui");
 * assert.equal(links.rollout("r 1"), "/ui/rollouts/r%201");
 * assert.equal(links.turn("r1", 2), "/ui/rollouts/r1/turns/2");
 * ```
 *
 * @module
 */
export { Layout, type Links, servedLinks, VIEWER_CSP } from "./layout.tsx";
export { RunsPage, RunsTables } from "./runs_page.tsx";
export { PlotsBody, PlotsPage } from "./plots_page.tsx";
export { DiffSection, ResultSection, RolloutBody, RolloutPage } from "./rollout_page.tsx";
export { TurnDetails, TurnPage } from "./turn_page.tsx";
export { SampleHeader, TokenSection, TokensPage } from "./tokens_page.tsx";
