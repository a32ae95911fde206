/**
 * `main.ts view <tree file | results.jsonl | rollout id> …`: the viewer's pages over saved
 * files, served locally; `--export FILE` writes one rollout as a self-contained HTML file instead.
 *
 * - a tree file is a saved `GET /api/rollouts/:id/tree` (or `main.ts inspect --json`, which adds
 *   the samples); without samples they are rebuilt from the tree with the default label policy;
 *   a rollout id is read from a running gateway, as `inspect` does;
 * - a `.jsonl` file is the rollout runner's results (`main.ts rollout --out`): task, reward per
 *   test, diff and the samples of each rollout; a tree of the same rollout joins it.
 *
 * @module
 */
import { Hono } from "hono";
import { PolicyModel } from "../model/mod.ts";
import { readRecords } from "../runner/mod.ts";
import { rolloutFromTree } from "../trajectory/mod.ts";
import {
  DEFAULT_PAGE_SIZE,
  exportHtml,
  type RunResult,
  type SavedRollout,
  savedSource,
  TokenText,
  viewerRoutes,
} from "../viewer/mod.ts";
import { integerFlag, parseFlags, PORT } from "./flags.ts";
import { MODEL_FLAGS, modelOptions } from "./model_flags.ts";
import { loadSource } from "./tree_source.ts";
import { UsageError } from "./usage_error.ts";

export const VIEW_USAGE =
  `usage: main.ts view <tree file | results.jsonl | rollout id>… [--port N] [--host H]
                    [--gateway URL] [model flags as serve]
       main.ts view <…> --export OUT.html [--rollout ID]

  Serves the viewer over saved files at http://H:N/ui (default 127.0.0.1, any free port).
  --export writes one rollout (the only one, or --rollout ID) as a self-contained HTML file.
  A rollout id is read from a running gateway (--gateway, env ROLLGATE_URL).`;

async function load(
  target: string,
  gateway: string,
): Promise<{ rollouts: SavedRollout[]; results: RunResult[] }> {
  if (target.endsWith(".jsonl")) {
    return { rollouts: [], results: [...(await readRecords(target)).values()] };
  }
  const { tree, samples } = await loadSource(target, gateway);
  try {
    const rollout = rolloutFromTree(tree);
    return { rollouts: [{ rollout, samples: samples.length ? samples : undefined }], results: [] };
  } catch (e) {
    throw new Error(`${target}: ${(e as Error).message}`);
  }
}

/** A file size as people read it: `812 B`, `40.2 KB`, `10.4 MB` (powers of 1,000). */
export function byteSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1e6) return `${(bytes / 1e3).toFixed(1)} KB`;
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** Exit status after an export; `undefined` while serving (the process stays up). */
export async function view(args: string[]): Promise<number | undefined> {
  const { values, positionals } = parseFlags("view", args, {
    port: { type: "string" },
    host: { type: "string" },
    ...MODEL_FLAGS,
    gateway: { type: "string" },
    export: { type: "string" },
    rollout: { type: "string" },
    help: { type: "boolean" },
  }, true);
  if (values.help) {
    console.log(VIEW_USAGE);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError(`nothing to view\n${VIEW_USAGE}`);
  const port = integerFlag(values.port, "--port", PORT) ?? 0;
  const gateway = values.gateway ?? Deno.env.get("ROLLGATE_URL") ?? "http://127.0.0.1:7860";
  const rollouts: SavedRollout[] = [], results: RunResult[] = [];
  for (const target of positionals) {
    const loaded = await load(target, gateway);
    rollouts.push(...loaded.rollouts);
    results.push(...loaded.results);
  }
  const source = savedSource(rollouts, results);
  const model = await PolicyModel.load(modelOptions(values));
  const decode = (ids: number[]) => model.decode(ids);

  if (values.export) {
    const all = source.list();
    const chosen = values.rollout ? source.get(values.rollout) : all.length === 1 ? all[0] : null;
    if (!chosen) {
      throw new UsageError(
        values.rollout
          ? `no rollout ${values.rollout} in what was given`
          : `${all.length} rollouts were given; name one with --rollout`,
      );
    }
    const html = new TextEncoder().encode(
      await exportHtml(chosen, new TokenText(decode), DEFAULT_PAGE_SIZE),
    );
    await Deno.writeFile(values.export, html);
    console.log(`rollgate view: wrote ${values.export} (${byteSize(html.length)})`);
    return 0;
  }

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
  return undefined;
}
