/**
 * The viewer's pages and the pieces they share, as Hono JSX components (server-rendered; the
 * page script in `../assets/` does the rest).
 *
 * @module
 */
export {
  count,
  duration,
  Evidence,
  JsonScript,
  Layout,
  type Links,
  servedLinks,
  VIEWER_CSP,
} from "./layout.tsx";
export { DEFAULT_ROW_LIMIT, RunsPage, RunsTables } from "./runs_page.tsx";
export {
  ChainTree,
  DiffSection,
  ResultSection,
  RolloutBody,
  RolloutPage,
  SamplesTable,
  turnPlaces,
} from "./rollout_page.tsx";
export { firstNewMessage, TurnDetails, TurnPage } from "./turn_page.tsx";
export { Legend, SampleHeader, TokenSection, TokensPage } from "./tokens_page.tsx";
export { Assistant, Messages, termsOf } from "./messages.tsx";
