/**
 * Every link in the project's Markdown leads somewhere in the repository: a relative link names a
 * file or folder that exists (never one outside the repository: a clone cannot follow it) and a
 * `#fragment` names a heading of its file; the README stays one screen wide (no prose line over
 * 120 characters). Each rule is first shown to find what it should on small made-up text.
 */
import assert from "node:assert/strict";
import { anchors, headingSlug, markdownLinks, proseLines } from "./markdown_links.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The Markdown files git tracks, but the tasks' own (fixture repositories). */
async function markdownFiles(): Promise<string[]> {
  const out = await new Deno.Command("git", {
    args: ["ls-files", "--cached", "--others", "--exclude-standard", "*.md"],
    cwd: ROOT,
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n")
    .filter((f) => f && !f.startsWith("tasks/"));
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** What is wrong with each link of `file` (a path relative to the repository), as lines. */
function brokenLinks(file: string, read: (path: string) => string): string[] {
  const problems: string[] = [];
  const text = read(file);
  const dir = file.includes("/") ? file.slice(0, file.lastIndexOf("/") + 1) : "";
  for (const { target, line } of markdownLinks(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:: not a file
    const [path, fragment] = target.split("#", 2) as [string, string | undefined];
    const resolved = path === "" ? file : new URL(path, `file:///repo/${dir}`).pathname;
    if (!resolved.startsWith("/repo/") && path !== "") {
      problems.push(`${file}:${line}: ${target} leaves the repository`);
      continue;
    }
    const inRepo = path === "" ? file : decodeURIComponent(resolved.slice("/repo/".length));
    if (!exists(ROOT + inRepo)) {
      problems.push(`${file}:${line}: ${target}: no ${inRepo}`);
      continue;
    }
    if (fragment !== undefined && inRepo.endsWith(".md") && !anchors(read(inRepo)).has(fragment)) {
      problems.push(`${file}:${line}: ${target}: ${inRepo} has no heading #${fragment}`);
    }
  }
  return problems;
}

Deno.test("rules: links outside code, GitHub's heading anchors, fenced code skipped", () => {
  const text = [
    "# Run it: `npm start` (Node 20+)",
    'See [api](docs/api.md#trainer-side), ![shot](docs/x.png "title") and `[no](code.md)`.',
    "```sh",
    "[not a link](inside/code.md)",
    "## Fenced",
    "```",
    "[ref]: ../shared/reference/x.md",
    '<a href="#run-it-npm-start-node-20">top</a>',
    "## Run it: `npm start` (Node 20+)",
  ].join("\n");
  assert.deepEqual(markdownLinks(text).map((l) => [l.target, l.line]), [
    ["docs/api.md#trainer-side", 2],
    ["docs/x.png", 2],
    ["../shared/reference/x.md", 7],
    ["#run-it-npm-start-node-20", 8],
  ]);
  assert.deepEqual(proseLines(text).map((l) => l.line), [1, 2, 7, 8, 9]);
  assert.equal(
    headingSlug("Replicas: several gateway processes on PostgreSQL"),
    "replicas-several-gateway-processes-on-postgresql",
  );
  assert.equal(
    headingSlug("`--backend` and [vLLM](https://x) – black-box"),
    "--backend-and-vllm--black-box",
  );
  assert.deepEqual([...anchors(text)], ["run-it-npm-start-node-20", "run-it-npm-start-node-20-1"]);
  const files: Record<string, string> = { "README.md": text, "docs/api.md": "## Trainer side\n" };
  const read = (p: string) => files[p] ?? Deno.readTextFileSync(ROOT + p);
  // docs/api.md and docs/x.png do not exist under this made-up root's names: checked by path.
  assert.deepEqual(
    brokenLinks("README.md", read).filter((p) => !p.includes("no docs/")),
    ["README.md:7: ../shared/reference/x.md leaves the repository"],
  );
});

Deno.test("docs: every link in the project's Markdown leads to a file and heading here", async () => {
  const read = (p: string) => Deno.readTextFileSync(ROOT + p);
  const problems = (await markdownFiles()).flatMap((f) => brokenLinks(f, read));
  assert.deepEqual(problems, []);
});

Deno.test("docs: no text points into ../shared (outside the repository)", async () => {
  const hits = (await markdownFiles()).flatMap((f) =>
    Deno.readTextFileSync(ROOT + f).split("\n").flatMap((line, i) =>
      /\.\.\/shared\/|\/work\/shared/.test(line) ? [`${f}:${i + 1}`] : []
    )
  );
  assert.deepEqual(hits, []);
});

Deno.test("README: one screen wide, no prose line over 120 characters", () => {
  const long = proseLines(Deno.readTextFileSync(ROOT + "README.md"))
    .filter((l) => [...l.text].length > 120).map((l) => `README.md:${l.line}`);
  assert.deepEqual(long, []);
});
