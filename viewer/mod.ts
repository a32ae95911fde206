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
export { DEFAULT_PAGE_SIZE, type ViewerOptions, viewerRoutes } from "./routes.tsx";
export {
  liveSource,
  type LiveSourceOptions,
  type RunResult,
  type RunTest,
  type SavedRollout,
  savedSource,
  type ViewedRollout,
  type ViewerSource,
} from "./source.ts";
export { exportHtml } from "./export_html.tsx";
export { TokenText } from "./token_text.ts";
export { sampleTokens, type TokenData, type TokenMark, turnTokens } from "./token_data.ts";
