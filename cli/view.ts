/**
 * `main.ts view <tree file | results.jsonl> …`: the viewer's pages over saved files, served
 * locally; `--export FILE` writes one rollout as a self-contained HTML file instead.
 *
 * - a tree file is a saved `GET /api/rollouts/:id/tree` (or `main.ts inspect --json`, which adds
 *   the samples); without samples they are rebuilt from the tree with the default label policy;
 * - a `.jsonl` file is the rollout runner's results (`main.ts rollout --out`): task, reward per
 *   test, diff and the samples of each rollout; a tree file of the same rollout joins it.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { Hono } from "hono";
import { PolicyModel } from "../model/mod.ts";
import { readRecords } from "../runner/mod.ts";
import { rolloutFromTree, type Sample, type TurnTreeExport } from "../trajectory/mod.ts";
import {
  DEFAULT_PAGE_SIZE,
  exportHtml,
  type RunResult,
  type SavedRollout,
  savedSource,
  TokenText,
  viewerRoutes,
} from "../viewer/mod.ts";

export const VIEW_USAGE =
  `usage: main.ts view <tree file | results.jsonl>… [--port N] [--host H] [--model-dir DIR]
       main.ts view <files>… --export OUT.html [--rollout ID]

  Serves the viewer over saved files at http://H:N/ui (default 127.0.0.1, a free port).
  --export writes one rollout (the only one, or --rollout ID) as a self-contained HTML file.`;

async function load(path: string): Promise<{ rollouts: SavedRollout[]; results: RunResult[] }> {
  if (path.endsWith(".jsonl")) {
    const records = await readRecords(path);
    return { rollouts: [], results: [...records.values()] as RunResult[] };
  }
  const data = JSON.parse(await Deno.readTextFile(path));
  const tree = (data.tree ?? data) as TurnTreeExport;
  try {
    const rollout = rolloutFromTree(tree);
    return { rollouts: [{ rollout, samples: data.samples as Sample[] | undefined }], results: [] };
  } catch (e) {
    throw new Error(`${path}: ${(e as Error).message}`);
  }
}

export async function view(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      "model-dir": { type: "string" },
      export: { type: "string" },
      rollout: { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help) return console.log(VIEW_USAGE);
  if (positionals.length === 0) {
    throw new Error(`give a tree file or a results file\n${VIEW_USAGE}`);
  }
  const rollouts: SavedRollout[] = [], results: RunResult[] = [];
  for (const path of positionals) {
    const loaded = await load(path);
    rollouts.push(...loaded.rollouts);
    results.push(...loaded.results);
  }
  const source = savedSource(rollouts, results);
  const model = await PolicyModel.load({ dir: values["model-dir"] });
  const decode = (ids: number[]) => model.decode(ids);

  if (values.export) {
    const all = source.list();
    const chosen = values.rollout ? source.get(values.rollout) : all.length === 1 ? all[0] : null;
    if (!chosen) {
      throw new Error(
        values.rollout
          ? `no rollout ${values.rollout} in the files`
          : `the files hold ${all.length} rollouts; name one with --rollout`,
      );
    }
    const html = await exportHtml(chosen, new TokenText(decode), DEFAULT_PAGE_SIZE);
    await Deno.writeTextFile(values.export, html);
    console.log(`rollgate view: wrote ${values.export} (${(html.length / 1e6).toFixed(1)} MB)`);
    return;
  }

  const port = Number(values.port ?? 0);
  if (!Number.isInteger(port) || port < 0) throw new Error(`--port must be a port number`);
  const app = new Hono();
  app.get("/", (c) => c.redirect("/ui"));
  app.route("/ui", viewerRoutes({ source, decode }));
  Deno.serve({
    port,
    hostname: values.host ?? "127.0.0.1",
    onListen: ({ hostname, port }) =>
      console.log(
        `rollgate view: http://${hostname}:${port}/ui (${source.list().length} rollouts)`,
      ),
  }, app.fetch);
}
