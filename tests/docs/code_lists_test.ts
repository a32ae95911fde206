/**
 * The lists the code knows, as the docs write them: the README's model families, tool parsers,
 * backends, harnesses (with their pinned packages and protocols) and option flags, the families
 * table of docs/families.md and the agents the Space card names. A family, harness or flag added in
 * the code and not in the docs (or the other way round) fails here, naming what to change.
 */
import assert from "node:assert/strict";
import { SERVE_BACKENDS, SERVE_FLAGS } from "../../cli/serve_flags.ts";
import { HARNESSES } from "../../harness/mod.ts";
import { ENGINE_FAMILY, FAMILIES, GENERIC_FAMILY, TOOL_PARSERS } from "../../model/mod.ts";
import { proseLines } from "./markdown_links.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const README = Deno.readTextFileSync(ROOT + "README.md");

/** The paragraph of `text` that starts with `opening` (up to the next blank line). */
function paragraph(text: string, opening: string): string {
  const start = text.indexOf(opening);
  assert.ok(start >= 0, `no paragraph starting with ${opening}`);
  const end = text.indexOf("\n\n", start);
  return text.slice(start, end < 0 ? undefined : end);
}

/** The code spans of `text` that are plain names (no spaces, no flags). */
function names(text: string): string[] {
  return [...text.matchAll(/`([^`\s]+)`/g)].map((m) => m[1]).filter((n) => !n.startsWith("-"));
}

/** The rows of the first Markdown table after `heading`, as cells. */
function tableAfter(text: string, heading: string): string[][] {
  const lines = text.slice(text.indexOf(heading)).split("\n");
  const start = lines.findIndex((l) => l.startsWith("|"));
  const rows = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(line.split("|").slice(1, -1).map((c) => c.trim()));
  }
  return rows;
}

const sorted = (xs: Iterable<string>) => [...xs].sort();

Deno.test("README: the model families, tool parsers and backends are the code's", () => {
  const families = [...FAMILIES, GENERIC_FAMILY, ENGINE_FAMILY].map((f) => f.name);
  assert.deepEqual(sorted(names(paragraph(README, "**Model families**"))), sorted(families));
  assert.deepEqual(
    sorted(names(paragraph(README, "**Tool parsers**"))),
    sorted(TOOL_PARSERS.map((p) => p.name)),
  );
  assert.deepEqual(sorted(names(paragraph(README, "**Backends**"))), sorted(SERVE_BACKENDS));
});

Deno.test("README: one row per harness, with its pinned package and protocol", () => {
  const protocols = {
    anthropic: "Anthropic Messages",
    responses: "OpenAI Responses",
    chat: "OpenAI Chat",
    gemini: "Gemini `generateContent`",
  };
  const rows = tableAfter(README, "## Agents");
  assert.deepEqual(
    sorted(rows.map((r) => r[0])),
    sorted(Object.keys(HARNESSES).map((n) => `\`${n}\``)),
  );
  for (const [name, cli, protocol] of rows) {
    const h = HARNESSES[name.replaceAll("`", "") as keyof typeof HARNESSES];
    const pin = h.registry === "pypi" ? `${h.package}==${h.version}` : `${h.package}@${h.version}`;
    assert.ok(cli.startsWith(`\`${pin}\``), `${name}: ${cli} should name ${pin}`);
    assert.ok(protocol.startsWith(protocols[h.protocol]), `${name}: ${protocol}`);
  }
});

Deno.test("README: every option it shows is a serve flag", () => {
  const flags = new Set(Object.keys(SERVE_FLAGS));
  const shown = tableAfter(README, "## Options").flatMap((r) =>
    [...r[0].matchAll(/--([a-z-]+)/g)].map((m) => m[1])
  );
  assert.ok(shown.length > 5);
  assert.deepEqual(shown.filter((f) => !flags.has(f)), []);
  // Every flag a code span of the README's prose starts with is serve's.
  const prose = proseLines(README).map((l) => l.text).join("\n");
  const unknown = [...prose.matchAll(/`--([a-z][a-z-]+)/g)].map((m) => m[1])
    .filter((f) => !flags.has(f) && f !== "harness"); // the Agents table: rollout's flag
  assert.deepEqual(unknown, []);
});

Deno.test("docs/families.md: one row per family of the registry", () => {
  const text = Deno.readTextFileSync(ROOT + "docs/families.md");
  const rows = tableAfter(text, "## Model families").map((r) => r[0].replaceAll("`", ""));
  const families = [...FAMILIES, GENERIC_FAMILY, ENGINE_FAMILY].map((f) => f.name);
  assert.deepEqual(sorted(rows), sorted(families));
});

Deno.test("the Space card names every agent CLI and says /ui needs the token", () => {
  const card = Deno.readTextFileSync(ROOT + "deploy/space/README.md");
  const missing = Object.keys(HARNESSES).filter((name) => !card.includes(`\`${name}\``));
  assert.deepEqual(missing, [], "harnesses the card does not name");
  assert.match(card, /`\/ui`[^.]*admin token|admin token[^.]*`\/ui`/);
  assert.match(card, /docs\/operations\.md/);
});
