/**
 * The trajectory viewer: runs, rollouts, chains, turns and every token, as server-rendered pages
 * with a little plain script. The gateway mounts it at `/ui`; `main.ts view` serves saved files.
 * It only reads rollouts: nothing here writes to a turn or waits on one.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { PolicyModel } from "../model/mod.ts";
 * import { RolloutStore } from "../trajectory/mod.ts";
 * import { liveSource, viewerRoutes } from "./mod.ts";
 *
 * const model = await PolicyModel.load();
 * const app = new Hono();
 * const source = liveSource({ store: new RolloutStore() });
 * app.route("/ui", viewerRoutes({ source, decode: (ids) => model.decode(ids) }));
 * ```
 *
 * @module
 */
export { DEFAULT_PAGE_SIZE, viewerRoutes } from "./routes.tsx";
export { liveSource, type RunResult, type SavedRollout, savedSource } from "./source.ts";
export { exportHtml } from "./export_html.tsx";
export { TokenText } from "./token_text.ts";
export { sampleTokens } from "./token_data.ts";
