/**
 * `GET /`: what answers here, for whoever arrives first (a browser on a Hugging Face Space, `curl`
 * on a fresh gateway). A browser (`Accept: text/html`) gets a small page, self-contained (the
 * gateway may be offline); an API client gets the same pointers as JSON.
 *
 * @module
 */
import type { Context } from "hono";

/** The endpoints a newcomer needs, with what each is for. */
const ENDPOINTS = [
  ["/ui", "the trajectory viewer: rollouts, chains, turns, tokens (needs the admin token if set)"],
  ["/ready", "200 once the model is loaded and the journal restored; 503 says what is missing"],
  ["/health", "200 while the process answers"],
  ["/metrics", "Prometheus metrics (needs the admin token if set)"],
  ["/api", "the trainer API: POST /api/rollouts, GET /api/requests/next, … (docs/api.md)"],
  ["/rollout/<id>/v1", "an agent's base URL: Anthropic Messages, OpenAI Chat and Responses"],
] as const;

const ABOUT = "rollgate: a gateway between coding-agent CLIs and an RL trainer. Each LLM call of " +
  "an agent becomes a turn in the policy's token ids, answered by the trainer (or an engine, or " +
  "a hosted API) and recorded token for token as training samples.";

const DOCS = "README.md and docs/ (api.md, operations.md) in the rollgate repository";

function escape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function page(): string {
  const rows = ENDPOINTS.map(([path, what]) => {
    const link = path.includes("<") ? escape(path) : `<a href="${path}">${path}</a>`;
    return `<tr><td><code>${link}</code></td><td>${escape(what)}</td></tr>`;
  }).join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>rollgate</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:46em;margin:2em auto;padding:0 1em}
td{padding:.2em .8em .2em 0;vertical-align:top}code{white-space:nowrap}</style></head>
<body><h1>rollgate</h1>
<p>${escape(ABOUT)}</p>
<table>
${rows}
</table>
<p>Documentation: ${escape(DOCS)}.</p>
</body></html>
`;
}

/** The landing answer for `c`: HTML for a browser, JSON otherwise. */
export function landing(c: Context): Response {
  if ((c.req.header("accept") ?? "").includes("text/html")) return c.html(page());
  return c.json({
    name: "rollgate",
    about: ABOUT,
    endpoints: Object.fromEntries(ENDPOINTS),
    docs: DOCS,
  });
}
