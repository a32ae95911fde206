/**
 * The viewer's pages as a Hono app, mounted by the gateway at `/ui` and served by `main.ts view`.
 *
 * | route                                  | page                                                  |
 * | -------------------------------------- | ----------------------------------------------------- |
 * | `/`                                    | runs: filter, sort, tasks; refreshes while live       |
 * | `/plots`                               | reward, groups, lengths, failures; refreshes too      |
 * | `/rollouts/:id`                        | chains, turns, samples, the runner's result           |
 * | `/rollouts/:id/turns/:n`               | a turn's new messages and answer (`?history=all`)     |
 * | `/rollouts/:id/turns/:n/tokens`        | a turn's own ids (`?from=`)                           |
 * | `/rollouts/:id/samples/:n`             | a sample's ids, one page (`?from=`, `?size=`)         |
 * | `/rollouts/:id/export.html`            | the rollout as one self-contained file                |
 *
 * A refreshing region asks for its own URL with `?fragment=1` and gets only that region.
 *
 * @module
 */
import {
  Layout,
  PlotsBody,
  PlotsPage,
  RolloutBody,
  RolloutPage,
  RunsPage,
  RunsTables,
  servedLinks,
  TokensPage,
  TurnPage,
  VIEWER_CSP,
} from "./pages/mod.ts";
import { type Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Child } from "hono/jsx";
import { exportHtml } from "./export_html.tsx";
import { type RunQuery, runRow, selectRows, taskGroups } from "./run_rows.ts";
import { plotData } from "./plot_data.ts";
import type { ViewerSource } from "./source.ts";
import { sampleLayout, sampleTokens, turnTokens } from "./token_data.ts";
import { TokenText } from "./token_text.ts";

export interface ViewerOptions {
  source: ViewerSource;
  /** Text of ids, special tokens kept (the policy model's `decode`). */
  decode: (ids: number[]) => Promise<string>;
  /** Path the app is mounted at; links are built from it. Default `/ui`. */
  base?: string;
  /** Ids per token page. Default 4096. */
  pageSize?: number;
}

export const DEFAULT_PAGE_SIZE = 4096;
const MAX_PAGE_SIZE = 32768;

function page(c: Context, body: Child, status: ContentfulStatusCode = 200): Response {
  return c.html(`<!DOCTYPE html>${body}`, status);
}

function intParam(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value !== undefined && Number.isInteger(n) && n >= 0 ? n : fallback;
}

export function viewerRoutes(o: ViewerOptions): Hono {
  const base = (o.base ?? "/ui").replace(/\/$/, "");
  const links = servedLinks(base);
  const text = new TokenText(o.decode);
  const defaultSize = o.pageSize ?? DEFAULT_PAGE_SIZE;
  const app = new Hono();
  app.use("*", async (c, next) => {
    await next();
    c.header("content-security-policy", VIEWER_CSP);
  });

  const notFound = (c: Context, what: string) =>
    page(
      c,
      <Layout title="rollgate · not found" links={links}>
        <h1>Not found</h1>
        <p>{what}</p>
      </Layout>,
      404,
    );
  const viewed = (c: Context) => o.source.get(c.req.param("id")!);
  const fragment = (c: Context) => c.req.query("fragment") === "1";
  const selfFragment = (c: Context) => {
    const url = new URL(c.req.url);
    url.searchParams.set("fragment", "1");
    return `${url.pathname}${url.search}`;
  };

  app.get("/", (c) => {
    const q: RunQuery = {
      q: c.req.query("q"),
      task: c.req.query("task"),
      status: c.req.query("status"),
      label: c.req.query("label"),
      error: c.req.query("error"),
      sort: c.req.query("sort"),
      dir: c.req.query("dir") === "asc"
        ? "asc"
        : c.req.query("dir") === "desc"
        ? "desc"
        : undefined,
      limit: c.req.query("limit"),
    };
    const all = o.source.list().map((v) => runRow(v));
    const rows = selectRows(all, q);
    const groups = taskGroups(rows);
    if (fragment(c)) return page(c, <RunsTables rows={rows} groups={groups} q={q} links={links} />);
    const tasks = [...new Set(all.flatMap((r) => (r.task === null ? [] : [r.task])))].sort();
    return page(
      c,
      <RunsPage
        rows={rows}
        groups={groups}
        q={q}
        links={links}
        refresh={o.source.live ? selfFragment(c) : null}
        tasks={tasks}
      />,
    );
  });

  app.get("/plots", (c) => {
    const t0 = performance.now();
    const d = plotData(o.source.list());
    if (fragment(c)) return page(c, <PlotsBody d={d} />);
    // The walk over every rollout runs on the gateway's event loop: an open page polls it at
    // most 1/20 of the time (every 2 s while it takes under 100 ms).
    const every = Math.ceil((performance.now() - t0) * 20);
    return page(
      c,
      <PlotsPage
        d={d}
        links={links}
        refresh={o.source.live ? { url: selfFragment(c), every } : null}
      />,
    );
  });

  app.get("/rollouts/:id", (c) => {
    const v = viewed(c);
    if (!v) return notFound(c, `No rollout ${c.req.param("id")}.`);
    if (fragment(c)) return page(c, <RolloutBody v={v} links={links} />);
    const live = o.source.live && v.rollout?.status === "active";
    return page(c, <RolloutPage v={v} links={links} refresh={live ? selfFragment(c) : null} />);
  });

  const turnOf = (c: Context) => {
    const v = viewed(c);
    const t = v?.rollout?.turns[intParam(c.req.param("index"), -1)];
    return v && t ? { v, r: v.rollout!, t } : null;
  };

  app.get("/rollouts/:id/turns/:index", (c) => {
    const found = turnOf(c);
    if (!found) return notFound(c, `No turn ${c.req.param("index")} in ${c.req.param("id")}.`);
    const { v, r, t } = found;
    return page(
      c,
      <TurnPage
        t={t}
        r={r}
        samples={v.samples()}
        links={links}
        all={c.req.query("history") === "all"}
      />,
    );
  });

  const range = (c: Context) => {
    const size = Math.min(Math.max(intParam(c.req.query("size"), defaultSize), 1), MAX_PAGE_SIZE);
    return { from: intParam(c.req.query("from"), 0), size };
  };
  const at = (c: Context, size: number) => (from: number) => {
    const url = new URL(c.req.url);
    url.searchParams.set("from", String(from));
    if (size !== defaultSize) url.searchParams.set("size", String(size));
    return `${url.pathname}${url.search}`;
  };

  app.get("/rollouts/:id/turns/:index/tokens", async (c) => {
    const found = turnOf(c);
    if (!found) return notFound(c, `No turn ${c.req.param("index")} in ${c.req.param("id")}.`);
    const { r, t } = found;
    const { from, size } = range(c);
    const data = await turnTokens(text, t, from, from + size);
    return page(
      c,
      <TokensPage
        title={`rollgate · ${r.id} #${t.index} ids`}
        heading={`Turn #${t.index}: the ids it added and sampled`}
        rolloutId={r.id}
        links={links}
        note="The ids this turn added to its parent's prompt and output, then its sampled ids; its loss is set per sample (see the rollout's samples)."
        data={data}
        size={size}
        at={at(c, size)}
      />,
    );
  });

  app.get("/rollouts/:id/samples/:index", async (c) => {
    const v = viewed(c);
    const s = v?.samples().find((s) => s.index === intParam(c.req.param("index"), -1));
    if (!v || !s) return notFound(c, `No sample ${c.req.param("index")} in ${c.req.param("id")}.`);
    if (s.token_ids === false) return notFound(c, `Sample ${s.index} holds messages, not ids.`);
    const { from, size } = range(c);
    const { segments, counts } = sampleLayout(s, v.rollout);
    const data = await sampleTokens(text, s, v.rollout, from, from + size);
    return page(
      c,
      <TokensPage
        title={`rollgate · ${v.id} sample ${s.index}`}
        heading={`Sample ${s.index} tokens`}
        rolloutId={v.id}
        links={links}
        sample={s}
        note={v.samplesNote}
        data={data}
        size={size}
        at={at(c, size)}
        segments={segments}
        counts={counts}
      />,
    );
  });

  app.get("/rollouts/:id/export.html", async (c) => {
    const v = viewed(c);
    if (!v) return notFound(c, `No rollout ${c.req.param("id")}.`);
    const html = await exportHtml(v, text, defaultSize);
    const name = `rollgate-${v.id.replace(/[^\w.-]+/g, "_")}.html`;
    return c.html(html, 200, { "content-disposition": `attachment; filename="${name}"` });
  });

  app.all("*", (c) => {
    const url = new URL(c.req.url);
    if (url.pathname.endsWith("/") && url.pathname.length > 1) {
      return c.redirect(`${url.pathname.replace(/\/+$/, "")}${url.search}`, 301);
    }
    return notFound(c, `No page at ${url.pathname}.`);
  });
  return app;
}
