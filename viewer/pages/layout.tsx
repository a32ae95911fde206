/**
 * The page frame (header, inline style and script: every page is one self-contained document)
 * and the small pieces every page uses.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { Child, FC } from "hono/jsx";

const CSS = Deno.readTextFileSync(new URL("../assets/viewer.css", import.meta.url));
const SCRIPT = Deno.readTextFileSync(new URL("../assets/viewer.js", import.meta.url));

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

/**
 * The `Content-Security-Policy` of every served page: the page's own inline style and script
 * (by hash) and requests to its own origin, nothing else (no other script, frame, form target
 * or base), so text from a rollout shown on a page can never run as code.
 */
export const VIEWER_CSP = [
  "default-src 'none'",
  `script-src ${sha256(SCRIPT)}`,
  `style-src ${sha256(CSS)}`,
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

/** Where the pages link to: the served routes, or anchors inside one exported file. */
export interface Links {
  runs(): string;
  rollout(id: string): string;
  turn(id: string, index: number): string;
  /** A turn's own ids (for a turn in no sample); none in an export. */
  turnTokens(id: string, index: number): string | null;
  sample(id: string, index: number, from?: number): string;
  exportFile(id: string): string | null;
  /** The plots page; none in an export. */
  plots(): string | null;
}

/** Links of the pages served under `base` (e.g. `/ui`). */
export function servedLinks(base: string): Links {
  const r = (id: string) => `${base}/rollouts/${encodeURIComponent(id)}`;
  return {
    runs: () => base,
    rollout: r,
    turn: (id, index) => `${r(id)}/turns/${index}`,
    turnTokens: (id, index) => `${r(id)}/turns/${index}/tokens`,
    sample: (id, index, from) => `${r(id)}/samples/${index}${from ? `?from=${from}` : ""}`,
    exportFile: (id) => `${r(id)}/export.html`,
    plots: () => `${base}/plots`,
  };
}

/** JSON inside a `<script type="application/json">`: `<` escaped so no tag can close it. */
export const JsonScript: FC<{ id: string; data: unknown }> = ({ id, data }) => (
  <script
    type="application/json"
    id={id}
    dangerouslySetInnerHTML={{ __html: JSON.stringify(data).replaceAll("<", "\\u003c") }}
  />
);

export const Layout: FC<{ title: string; crumbs?: Child; links: Links; children?: Child }> = (
  { title, crumbs, links, children },
) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{title}</title>
      <link rel="icon" href="data:," />
      <style dangerouslySetInnerHTML={{ __html: CSS }} />
    </head>
    <body>
      <header class="top">
        <a class="brand" href={links.runs()}>rollgate</a>
        {links.plots() ? <a href={links.plots()!}>plots</a> : null}
        {crumbs}
        <span class="updated" data-updated></span>
      </header>
      <main>{children}</main>
      <script dangerouslySetInnerHTML={{ __html: SCRIPT }} />
    </body>
  </html>
);

export function count(n: number | null | undefined): string {
  return n === null || n === undefined ? "–" : n.toLocaleString("en-US");
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function time(ms: number | null | undefined): string {
  return ms ? new Date(ms).toISOString().replace("T", " ").slice(0, 19) : "–";
}

export function reward(r: number | null | undefined): string {
  return r === null || r === undefined ? "–" : String(Math.round(r * 1000) / 1000);
}

/** Evidence of a chain's label, as `key: value` pairs. */
export const Evidence: FC<{ evidence: Record<string, unknown> }> = ({ evidence }) => (
  <span class="evidence">
    {Object.entries(evidence).map(([k, v]) => (
      <span>
        {k}: <code>{typeof v === "string" ? v : JSON.stringify(v)}</code>
        {"  "}
      </span>
    ))}
  </span>
);
