/**
 * The walls hold: every product import is checked against the layer order and the `mod.ts` rule
 * of docs/design.md, and for loops. The rules themselves are tested on small made-up graphs
 * first, so a check that silently finds nothing cannot pass for a clean tree.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { type Import, importSpecifiers, productFiles, readImports } from "./import_graph.ts";
import {
  climbingImports,
  climbingRoomImports,
  deepImports,
  fileCycles,
  folderCycles,
  LAYERS,
  ROOMS,
  topFolder,
} from "./layers.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const hasMod = (dir: string) => existsSync(`${ROOT}${dir}/mod.ts`);
const FILES = productFiles(ROOT);
const IMPORTS = readImports(ROOT, FILES);

const fakeMods = new Set(["gateway", "gateway/anthropic", "trajectory", "model", "model/parsers"]);
const fakeHasMod = (dir: string) => fakeMods.has(dir);
const imp = (from: string, to: string): Import => ({ from, to });

Deno.test("rules: a deep import across folders or into a sub-folder is named, mod.ts is not", () => {
  assert.deepEqual(
    deepImports([
      imp("gateway/app.ts", "trajectory/turns/turn_runner.ts"),
      imp("gateway/app.ts", "trajectory/mod.ts"),
      imp("gateway/app.ts", "gateway/anthropic/stream.ts"),
      imp("gateway/app.ts", "gateway/anthropic/mod.ts"),
      imp("gateway/anthropic/stream.ts", "gateway/protocol.ts"),
      imp("model/policy_model.ts", "model/parsers/qwen3.ts"),
      imp("main.ts", "model/mod.ts"),
    ], fakeHasMod),
    [
      "gateway/app.ts imports trajectory/turns/turn_runner.ts; import trajectory/mod.ts instead",
      "gateway/app.ts imports gateway/anthropic/stream.ts; import gateway/anthropic/mod.ts instead",
      "model/policy_model.ts imports model/parsers/qwen3.ts; import model/parsers/mod.ts instead",
    ],
  );
});

Deno.test("rules: climbing the layers, an unplaced folder and a forbidden lower folder fail", () => {
  const found = climbingImports([
    imp("trajectory/turns/turn_runner.ts", "gateway/mod.ts"),
    imp("model/mod.ts", "canonical/mod.ts"),
    imp("sandbox/mod.ts", "gateway/mod.ts"),
    imp("runner/run.ts", "gateway/mod.ts"),
    imp("harness/mod.ts", "sandbox/mod.ts"),
    imp("scratch/mod.ts", "trajectory/mod.ts"),
    imp("cli/mod.ts", "main.ts"),
  ]);
  assert.deepEqual(found, [
    "trajectory/turns/turn_runner.ts imports gateway/mod.ts: trajectory may not import gateway (layer 3 → 5)",
    "sandbox/mod.ts imports gateway/mod.ts: sandbox must not use gateway",
    "harness/mod.ts imports sandbox/mod.ts: harness may not import sandbox (layer 6 → 6)",
    "scratch/ has no place in LAYERS (tests/architecture/layers.ts)",
    "cli/mod.ts imports main.ts: cli may not import main.ts (layer 8 → 9)",
  ]);
});

Deno.test("rules: a room importing a room that is not below it, or an unplaced room, fails", () => {
  assert.deepEqual(
    climbingRoomImports([
      imp("trajectory/samples/samples.ts", "trajectory/tree/mod.ts"), // down: fine
      imp("trajectory/turn.ts", "trajectory/samples/mod.ts"), // the folder's own files: not a room
      imp("trajectory/tree/turn_tree.ts", "trajectory/token_rows/mod.ts"), // same rank
      imp("trajectory/tree/turn_tree.ts", "trajectory/samples/mod.ts"),
      imp("gateway/http/auth.ts", "gateway/agent/mod.ts"),
      imp("gateway/agent/anthropic/stream.ts", "gateway/http/mod.ts"), // a nested room: its room's rank
      imp("trajectory/scratch/x.ts", "trajectory/tree/mod.ts"),
    ]),
    [
      "trajectory/tree/turn_tree.ts imports trajectory/token_rows/mod.ts: trajectory/tree/ may not import trajectory/token_rows/",
      "trajectory/tree/turn_tree.ts imports trajectory/samples/mod.ts: trajectory/tree/ may not import trajectory/samples/",
      "gateway/http/auth.ts imports gateway/agent/mod.ts: gateway/http/ may not import gateway/agent/",
      "trajectory/scratch/ has no place in ROOMS (tests/architecture/layers.ts)",
    ],
  );
});

Deno.test("rules: loops between files and between folders are found", () => {
  assert.deepEqual(
    fileCycles([
      imp("a/x.ts", "a/y.ts"),
      imp("a/y.ts", "a/z.ts"),
      imp("a/z.ts", "a/x.ts"),
      imp("a/z.ts", "b/mod.ts"),
    ]),
    [["a/x.ts", "a/y.ts", "a/z.ts"]],
  );
  const folders = folderCycles([
    imp("gateway/anthropic/stream.ts", "gateway/protocol.ts"), // its own enclosing folder: fine
    imp("gateway/agent_routes.ts", "gateway/anthropic/mod.ts"),
    imp("model/policy_model.ts", "model/parsers/mod.ts"),
    imp("model/parsers/qwen3.ts", "trajectory/mod.ts"),
    imp("trajectory/turn.ts", "model/mod.ts"),
  ], fakeHasMod);
  assert.deepEqual(folders, [["model", "model/parsers", "trajectory"]]);
});

Deno.test("rules: imports are read from code, not from comments or strings", () => {
  const source = `
    /** @example
     * import { x } from "../gateway/app.ts";
     */
    // import { y } from "../gateway/auth.ts";
    import type {
      A,
      B,
    } from "./a.ts";
    export * from "./b.ts";
    export { c } from "../c/mod.ts";
    import "./side_effect.ts";
    const d = await import("./lazy.ts");
    const url = "http://example.com/x.ts";
    import { z } from "zod";
  `;
  assert.deepEqual(importSpecifiers(source), [
    "./a.ts",
    "./b.ts",
    "../c/mod.ts",
    "./side_effect.ts",
    "./lazy.ts",
  ]);
});

Deno.test("the product's imports were read", () => {
  assert.ok(FILES.includes("main.ts") && FILES.includes("gateway/app.ts"));
  assert.ok(!FILES.some((f) => f.startsWith("tests/") || f.endsWith("_test.ts")));
  assert.ok(IMPORTS.length > 200, `only ${IMPORTS.length} imports found`);
  assert.ok(IMPORTS.some((i) => i.from === "gateway/app.ts" && i.to === "trajectory/mod.ts"));
});

Deno.test("every product folder has a mod.ts", () => {
  const dirs = new Set(FILES.filter((f) => f.includes("/")).map((f) => f.replace(/\/[^/]+$/, "")));
  assert.deepEqual([...dirs].filter((d) => !hasMod(d)), []);
});

Deno.test("every top-level folder has a place in the layer order", () => {
  const placed = new Set(LAYERS.flatMap((l) => l.folders));
  assert.deepEqual([...new Set(FILES.map(topFolder))].filter((f) => !placed.has(f)), []);
});

Deno.test("no import reaches behind another folder's mod.ts", () => {
  assert.deepEqual(deepImports(IMPORTS, hasMod), []);
});

Deno.test("imports go down the layers", () => {
  assert.deepEqual(climbingImports(IMPORTS), []);
});

Deno.test("no files import each other in a loop", () => {
  assert.deepEqual(fileCycles(IMPORTS), []);
});

Deno.test("no folders import each other in a loop", () => {
  assert.deepEqual(folderCycles(IMPORTS, hasMod), []);
});

Deno.test("the rooms of trajectory/ and gateway/ go down their order, and each has a place", () => {
  assert.deepEqual(climbingRoomImports(IMPORTS), []);
  for (const top of Object.keys(ROOMS)) {
    const rooms = [...Deno.readDirSync(ROOT + top)].filter((e) =>
      e.isDirectory && hasMod(`${top}/${e.name}`)
    )
      .map((e) => e.name);
    assert.ok(rooms.length >= 3, `${top}/ has only ${rooms.length} rooms`);
    assert.deepEqual(rooms.filter((r) => !ROOMS[top].some((rank) => rank.includes(r))), []);
  }
});
