/**
 * The rooms' surfaces hold: each folder's `mod.ts` exports only what other folders import, the
 * gateway and the CLI change rollouts only through `RolloutActions` (never the journal writer,
 * never an event of their own), and no product file is over 400 lines. As in `layers_test.ts`,
 * each rule is first shown to find what it should on small made-up sources.
 */
import assert from "node:assert/strict";
import { productFiles } from "./import_graph.ts";
import {
  allTsFiles,
  declaredExports,
  importedNames,
  journalWrites,
  unusedExports,
} from "./surface.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const MAX_LINES = 400;

Deno.test("rules: exports and imports are read with aliases, types and re-exports", () => {
  const mod = `
    /** @example
     * export { notReal } from "./x.ts";
     */
    export { a, type B, c as d } from "./x.ts";
    export type { E } from "./e.ts";
    export * from "./f.ts";
    export function own() {}
    export const K = 1;
  `;
  assert.deepEqual(declaredExports(mod), {
    names: ["a", "B", "d", "E", "own", "K"],
    own: ["own", "K"],
    star: ["./f.ts"],
  });
  const user = `
    import { a, type B as Bee } from "../x/mod.ts";
    import * as all from "../y/mod.ts";
    export { c } from "../z/mod.ts";
    Deno.test("lazy", async () => {
      const { lazy } = await import("../w/mod.ts");
    });
  `;
  assert.deepEqual(
    Object.fromEntries([...importedNames(user)].map(([k, v]) => [k, [...v]])),
    {
      "../x/mod.ts": ["a", "B"],
      "../y/mod.ts": ["*"],
      "../z/mod.ts": ["c"],
      "../w/mod.ts": ["lazy"],
    },
  );
});

Deno.test("rules: the journal writer and hand-built events are found, a façade call is not", () => {
  assert.deepEqual(
    journalWrites(`import { JournalWriter } from "../trajectory/journal_writer.ts";`),
    ["uses JournalWriter"],
  );
  assert.deepEqual(
    journalWrites(`writer.record({ rollout: r.id, kind: "host_call", data: call });`),
    [`builds an event (kind: "host_call")`],
  );
  assert.deepEqual(journalWrites(`await rollouts.hostCall(rollout, call);`), []);
  assert.deepEqual(journalWrites(`const spec = { name, kind: "function" };`), []);
});

Deno.test("every mod.ts exports only what another folder imports", () => {
  const files = allTsFiles(ROOT);
  const mods = files.filter((f) => f.endsWith("/mod.ts"));
  assert.ok(mods.length > 30, `only ${mods.length} mod.ts found`);
  assert.deepEqual(unusedExports(ROOT, mods, files), {});
});

Deno.test("every mod.ts has an example that asserts what it shows (run by npm test)", () => {
  const mods = allTsFiles(ROOT).filter((f) => f.endsWith("/mod.ts"));
  const without = mods.filter((f) => {
    const doc = Deno.readTextFileSync(ROOT + f).split("*/")[0];
    const example = doc.split("@example")[1] ?? "";
    return !/```ts\n/.test(example) || !/\bassert\./.test(example);
  });
  assert.deepEqual(without, []);
  assert.match(Deno.readTextFileSync(`${ROOT}tests/run_all.sh`), /deno test -A --doc/);
});

Deno.test("the gateway and the CLI neither use the journal writer nor build journal events", () => {
  const found = productFiles(ROOT)
    .filter((f) => f.startsWith("gateway/") || f.startsWith("cli/"))
    .flatMap((f) => journalWrites(Deno.readTextFileSync(ROOT + f)).map((w) => `${f} ${w}`));
  assert.deepEqual(found, []);
});

Deno.test(`no product file is over ${MAX_LINES} lines`, () => {
  const long = productFiles(ROOT)
    .map((f) => ({ f, lines: Deno.readTextFileSync(ROOT + f).split("\n").length - 1 }))
    .filter(({ lines }) => lines > MAX_LINES)
    .map(({ f, lines }) => `${f}: ${lines} lines`);
  assert.deepEqual(long, []);
});
