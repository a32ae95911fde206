/**
 * rollgate's command line; every verb lives in `cli/`.
 *
 *     deno run -A main.ts serve [--port 7860] [--host 127.0.0.1] [--model-dir DIR]
 *     deno run -A main.ts rollout --tasks tasks --harness pi --policy gold --out results.jsonl
 *     deno run -A main.ts inspect|audit <rollout id | tree file>
 *     deno run -A main.ts view <tree file | results.jsonl>
 *
 * @module
 */
import { runCommandLine } from "./cli/mod.ts";

if (import.meta.main) {
  const status = await runCommandLine(Deno.args);
  if (status !== undefined) Deno.exit(status);
}
