/**
 * Where `inspect` and `audit` read a rollout's tree: a running gateway (by rollout id) or an
 * exported file (`GET /api/rollouts/:id/tree` saved as JSON), and the flags both verbs share.
 *
 * @module
 */
import type { Sample, TurnTreeExport } from "../trajectory/mod.ts";
import { parseFlags } from "./flags.ts";
import { MODEL_FLAGS } from "./model_flags.ts";
import { UsageError } from "./usage_error.ts";

export interface Source {
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

/**
 * The targets and flags of `inspect` / `audit`; `undefined` when `--help` was asked for (the verb
 * prints its usage).
 */
export function treeVerbArgs(verb: "inspect" | "audit", args: string[]) {
  const { values, positionals } = parseFlags(verb, args, {
    gateway: { type: "string" },
    ...MODEL_FLAGS,
    json: { type: "boolean" },
    help: { type: "boolean" },
  }, true);
  if (values.help) return undefined;
  if (positionals.length === 0) {
    throw new UsageError(`give a rollout id or an exported tree file (main.ts ${verb} --help)`);
  }
  const gateway = values.gateway ?? Deno.env.get("ROLLGATE_URL") ?? "http://127.0.0.1:7860";
  return { values, positionals, gateway };
}
