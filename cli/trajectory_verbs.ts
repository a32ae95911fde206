/**
 * `main.ts inspect` and `main.ts audit`: read a rollout's tree from a running gateway (by id) or
 * from an exported file (`GET /api/rollouts/:id/tree` saved as JSON), and print it readably or
 * audit it against a full re-render.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { PolicyModel } from "../model/mod.ts";
import { auditTree, formatAudit } from "../trajectory/audit.ts";
import { formatTree } from "../trajectory/inspect.ts";
import type { Sample } from "../trajectory/samples.ts";
import type { TurnTreeExport } from "../trajectory/tree_export.ts";

interface Source {
  tree: TurnTreeExport;
  samples: Sample[];
}

async function fetchJson(url: string): Promise<unknown> {
  const token = Deno.env.get("ROLLGATE_ADMIN_TOKEN");
  const res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** A file holding a tree export (optionally `{tree, samples}`), or a rollout id on a gateway. */
export async function loadSource(target: string, gateway: string): Promise<Source> {
  let text: string | null = null;
  try {
    text = await Deno.readTextFile(target);
  } catch { /* not a file: a rollout id */ }
  if (text !== null) {
    const data = JSON.parse(text);
    const tree = (data.tree ?? data) as TurnTreeExport;
    if (tree.format !== "rollgate.tree.v1") {
      throw new Error(`${target} is not a rollgate tree export`);
    }
    return { tree, samples: (data.samples ?? []) as Sample[] };
  }
  const base = `${gateway.replace(/\/$/, "")}/api/rollouts/${encodeURIComponent(target)}`;
  const tree = await fetchJson(`${base}/tree`) as TurnTreeExport;
  const { samples } = await fetchJson(`${base}/samples`) as { samples: Sample[] };
  return { tree, samples };
}

function options(args: string[]) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      gateway: { type: "string" },
      "model-dir": { type: "string" },
      json: { type: "boolean" },
    },
  });
  if (positionals.length === 0) throw new Error("give a rollout id or an exported tree file");
  const gateway = values.gateway ?? Deno.env.get("ROLLGATE_URL") ?? "http://127.0.0.1:7860";
  return { values, positionals, gateway };
}

export async function inspect(args: string[]): Promise<void> {
  const { values, positionals, gateway } = options(args);
  for (const target of positionals) {
    const { tree, samples } = await loadSource(target, gateway);
    console.log(values.json ? JSON.stringify({ tree, samples }) : formatTree(tree, samples));
  }
}

/** Exit status 1 when any turn does not extend its parent verbatim. */
export async function audit(args: string[]): Promise<number> {
  const { values, positionals, gateway } = options(args);
  const model = await PolicyModel.load({ dir: values["model-dir"] });
  let status = 0;
  for (const target of positionals) {
    const report = await auditTree(model, (await loadSource(target, gateway)).tree);
    if (values.json) console.log(JSON.stringify(report));
    else console.log(formatAudit(report));
    if (report.turns.some((t) => t.extends_parent === false)) status = 1;
  }
  return status;
}
