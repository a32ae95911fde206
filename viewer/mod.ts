/**
 * The trajectory viewer: runs, rollouts, chains, turns and every token, and plots of a run
 * (reward over time and by weight version, GRPO groups, lengths, failures: `plot_data.ts`, drawn as
 * inline SVG), as server-rendered pages with a little plain script. The gateway mounts it at
 * `/ui`; `main.ts view` serves saved files. It only reads rollouts: nothing here writes to a turn
 * or waits on one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Hono } from "hono";
 * import { RolloutStore } from "../trajectory/mod.ts";
 * import { liveSource, viewerRoutes } from "./mod.ts";
 *
 * const store = new RolloutStore();
 * store.create({ id: "demo", metadata: { task: "py-slug" } });
 * const app = new Hono();
 * const decode = (ids: number[]) => Promise.resolve(ids.join(" "));
 * app.route("/ui", viewerRoutes({ source: liveSource({ store }), decode }));
 * const page = await app.request("/ui");
 * assert.equal(page.status, 200);
 * assert.match(await page.text(), /demo/);
 * const plots = await app.request("/ui/plots");
 * assert.match(await plots.text(), /1 rollouts · 0 with a reward/);
 * ```
 *
 * @module
 */
export { DEFAULT_PAGE_SIZE, viewerRoutes } from "./routes.tsx";
export { liveSource, type RunResult, type SavedRollout, savedSource } from "./source.ts";
export { exportHtml } from "./export_html.tsx";
export { TokenText } from "./token_text.ts";
export { sampleTokens } from "./token_data.ts";
