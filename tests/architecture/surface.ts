/**
 * What each folder's `mod.ts` offers and what other folders take from it, read from source: the
 * names a `mod.ts` exports (following `export *`), and the names every other file imports from it
 * (`import { a, type B }`, `export { a } from`, `const { a } = await import(…)`; `import * as`
 * and `export *` take every name). A name no other folder imports is surface nobody needs.
 *
 * @module
 */
import { resolvePath } from "./import_graph.ts";

const COMMENT = /\/\*[\s\S]*?\*\/|(?<![:"'`\\])\/\/[^\n]*/g;
const strip = (source: string) => source.replace(COMMENT, "");

/** `a, type B, C as D` → the names as seen by the importer (`as` taken into account). */
function names(list: string, side: "local" | "exported"): string[] {
  return list.split(",").map((n) => n.trim().replace(/^type\s+/, "")).filter(Boolean).map((n) => {
    const [original, alias] = n.split(/\s+as\s+/);
    return side === "exported" ? (alias ?? original) : original;
  });
}

/**
 * The names `source` exports: all of them, those it declares itself (not re-exported), and the
 * specifiers it re-exports whole (`export *`).
 */
export function declaredExports(
  source: string,
): { names: string[]; own: string[]; star: string[] } {
  const code = strip(source);
  const out: string[] = [];
  const own: string[] = [];
  for (const m of code.matchAll(/\bexport\s+(?:type\s+)?\{([^}]*)\}/g)) {
    out.push(...names(m[1], "exported"));
  }
  for (
    const m of code.matchAll(
      /\bexport\s+(?:declare\s+)?(?:async\s+)?(?:function\*?|class|const|let|interface|type|enum|abstract\s+class)\s+([A-Za-z_$][\w$]*)/g,
    )
  ) own.push(m[1]);
  const star = [...code.matchAll(/\bexport\s+\*\s+from\s*["']([^"']+)["']/g)].map((m) => m[1]);
  return { names: [...out, ...own], own, star };
}

/** Every name `file` (relative to `root`) exports, `export *` followed. */
export function exportsOf(root: string, file: string, seen = new Set<string>()): string[] {
  if (seen.has(file)) return [];
  seen.add(file);
  const { names, star } = declaredExports(Deno.readTextFileSync(root + file));
  return [...names, ...star.flatMap((s) => exportsOf(root, resolvePath(file, s), seen))];
}

/** What `source` takes from each module it imports: specifier → names, or `*` for all. */
export function importedNames(source: string): Map<string, Set<string>> {
  const code = strip(source);
  const out = new Map<string, Set<string>>();
  const add = (spec: string, list: string[]) => {
    const set = out.get(spec) ?? new Set<string>();
    for (const n of list) set.add(n);
    out.set(spec, set);
  };
  const spec = `\\s*["']([^"']+)["']`;
  for (
    const m of code.matchAll(
      new RegExp(`\\bimport\\s+(?:type\\s+)?\\{([^}]*)\\}\\s*from${spec}`, "g"),
    )
  ) {
    add(m[2], names(m[1], "local"));
  }
  for (
    const m of code.matchAll(
      new RegExp(`\\bexport\\s+(?:type\\s+)?\\{([^}]*)\\}\\s*from${spec}`, "g"),
    )
  ) {
    add(m[2], names(m[1], "local"));
  }
  for (
    const m of code.matchAll(
      new RegExp(`\\bimport\\s+(?:type\\s+)?\\*\\s+as\\s+\\w+\\s+from${spec}`, "g"),
    )
  ) {
    add(m[1], ["*"]);
  }
  for (const m of code.matchAll(new RegExp(`\\bexport\\s+\\*\\s+from${spec}`, "g"))) {
    add(m[1], ["*"]);
  }
  for (
    const m of code.matchAll(
      new RegExp(`\\{([^{}]*)\\}\\s*=\\s*await\\s+import\\(${spec}\\s*\\)`, "g"),
    )
  ) add(m[2], names(m[1].replace(/:\s*\w+/g, ""), "local"));
  return out;
}

/**
 * For each `mod.ts` in `mods`, the names it exports that no file outside its folder imports.
 * `files` are every TypeScript file that may use them (product, tests, benches). A function a
 * `mod.ts` declares itself may also be used by its folder's own tests (no other file has it).
 */
export function unusedExports(
  root: string,
  mods: readonly string[],
  files: readonly string[],
): Record<string, string[]> {
  const used = new Map<string, Set<string>>(mods.map((m) => [m, new Set()]));
  for (const file of files) {
    for (const [spec, taken] of importedNames(Deno.readTextFileSync(root + file))) {
      if (!spec.startsWith(".")) continue;
      const target = resolvePath(file, spec);
      const set = used.get(target);
      if (!set) continue;
      if (file.startsWith(target.slice(0, -"mod.ts".length))) {
        if (!/_test\.ts$/.test(file)) continue;
        const { own } = declaredExports(Deno.readTextFileSync(root + target));
        for (const n of taken) if (own.includes(n)) set.add(n);
        continue;
      }
      for (const n of taken) set.add(n);
    }
  }
  const out: Record<string, string[]> = {};
  for (const mod of mods) {
    const set = used.get(mod)!;
    if (set.has("*")) continue;
    const unused = exportsOf(root, mod).filter((n) => !set.has(n));
    if (unused.length > 0) out[mod] = unused;
  }
  return out;
}

/** Every `.ts` file under `root` outside installed packages, relative to it, sorted. */
export function allTsFiles(root: string): string[] {
  const skip = new Set([".git", ".venv", "node_modules", "agents"]);
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(root + dir)) {
      const path = dir + entry.name;
      if (entry.isDirectory && !skip.has(path)) walk(path + "/");
      else if (entry.isFile && /\.tsx?$/.test(path)) out.push(path);
    }
  };
  walk("");
  return out.sort();
}

/** The journal's private parts: the writer and the event builders. */
const JOURNAL_PRIVATE = /\bJournalWriter\b|journal_writer\.ts|journal_events\.ts/;
/** An event literal: a `kind` naming one of the journal's event kinds. */
const EVENT_KIND =
  /\bkind\s*:\s*["'](?:rollout_created|rollout_finished|turn_registered|turn_planned|turn_recorded|turn_failed|turn_retried|host_call|agent_exit)["']/;

/** Where a source text reaches the journal writer or builds a journal event itself. */
export function journalWrites(source: string): string[] {
  const code = strip(source);
  const out: string[] = [];
  const writer = code.match(JOURNAL_PRIVATE);
  if (writer) out.push(`uses ${writer[0]}`);
  const event = code.match(EVENT_KIND);
  if (event) out.push(`builds an event (${event[0]})`);
  return out;
}
