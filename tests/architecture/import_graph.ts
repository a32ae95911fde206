/**
 * The relative imports of the product's TypeScript files, read from source: every `import` /
 * `export … from`, side-effect import and dynamic `import("…")`, comments skipped. Paths are
 * relative to the repository root (`gateway/app.ts`); package imports (`hono`, `node:…`) are not
 * listed.
 *
 * @module
 */

/**
 * Top-level entries that are not product code: tests, benchmarks, clients, deployment recipes
 * (`deploy/`: the container's standalone health check, scripts), installed packages.
 */
const NOT_PRODUCT = new Set([
  ".cache",
  ".git",
  ".venv",
  ".venv-engine",
  ".venv-trainers",
  "agents",
  "bench",
  "clients",
  "deploy",
  "docs",
  "node_modules",
  "tasks",
  "tests",
]);

export interface Import {
  /** The importing file. */
  from: string;
  /** The imported file, normalized. */
  to: string;
}

/** Whether `path` (relative to the root) is product code: not a test, fixture, bench or client. */
export function isProductFile(path: string): boolean {
  const parts = path.split("/");
  return /\.tsx?$/.test(path) && !/_test\.tsx?$/.test(path) && !NOT_PRODUCT.has(parts[0]) &&
    !parts.includes("__fixtures__");
}

/** Every product `.ts` / `.tsx` file under `root`, relative to it, sorted. */
export function productFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(root + dir)) {
      const path = dir + entry.name;
      if (entry.isDirectory && !NOT_PRODUCT.has(path)) walk(path + "/");
      else if (entry.isFile && isProductFile(path)) out.push(path);
    }
  };
  walk("");
  return out.sort();
}

const COMMENT = /\/\*[\s\S]*?\*\/|(?<![:"'`\\])\/\/[^\n]*/g;
const SPECIFIERS = [
  /\b(?:import|export)\s+(?:type\s+)?[^'"`;]*?\bfrom\s*["']([^"']+)["']/g,
  /\bimport\s*["']([^"']+)["']/g,
  /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
];

/** The relative specifiers a source text imports, in order of appearance per kind. */
export function importSpecifiers(source: string): string[] {
  const code = source.replace(COMMENT, "");
  return SPECIFIERS.flatMap((re) => [...code.matchAll(re)].map((m) => m[1]))
    .filter((s) => s.startsWith("./") || s.startsWith("../"));
}

/** `dir/../a/./b.ts` → `a/b.ts`, relative to the root. */
export function resolvePath(fromFile: string, specifier: string): string {
  const parts = fromFile.split("/").slice(0, -1);
  for (const part of specifier.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== ".") parts.push(part);
  }
  return parts.join("/");
}

/** The imports of `files`, read from `root`. */
export function readImports(root: string, files: readonly string[]): Import[] {
  return files.flatMap((from) =>
    importSpecifiers(Deno.readTextFileSync(root + from)).map((s) => ({
      from,
      to: resolvePath(from, s),
    }))
  );
}
