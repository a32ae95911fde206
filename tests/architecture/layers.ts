/**
 * The walls between folders (docs/design.md, "Layers"), as rules over a list of imports:
 *
 * - a folder's public surface is its `mod.ts`: an import into another folder (or into a
 *   sub-folder with its own `mod.ts`) names that `mod.ts`, never a file behind it;
 * - imports go down the layers: a top-level folder imports only folders of lower layers;
 * - nothing imports in a loop: no cycle between files, none between folders.
 *
 * Files of a sub-folder may use the files of the folders that contain it (`gateway/anthropic/`
 * uses `gateway/protocol.ts`); that is the same wall, seen from inside.
 *
 * @module
 */
import type { Import } from "./import_graph.ts";

export interface Layer {
  /** Top-level folders of this layer (`main.ts` stands for the root's own files). */
  folders: readonly string[];
  /** Lower folders this layer must still not import. */
  never?: readonly string[];
}

/** The layer order, lowest first. A new top-level folder needs a place here and in the design. */
export const LAYERS: readonly Layer[] = [
  { folders: ["canonical"] },
  { folders: ["model"] },
  { folders: ["generation"] },
  { folders: ["trajectory"] },
  { folders: ["viewer", "journal"] },
  { folders: ["gateway"] },
  { folders: ["harness", "sandbox"], never: ["gateway"] },
  { folders: ["runner", "cluster"] },
  { folders: ["cli"] },
  { folders: ["main.ts"] },
];

/** The top-level folder of a path; files at the root belong to `main.ts`'s layer. */
export function topFolder(path: string): string {
  return path.includes("/") ? path.slice(0, path.indexOf("/")) : "main.ts";
}

function dirOf(path: string): string[] {
  return path.split("/").slice(0, -1);
}

/**
 * For an import of `to` from `from`: the `mod.ts` it must name instead, or null when it is fine.
 * The wall is the first folder below the two files' common folder that has a `mod.ts`.
 */
export function requiredModule(
  from: string,
  to: string,
  hasMod: (dir: string) => boolean,
): string | null {
  const a = dirOf(from), b = dirOf(to);
  let k = 0;
  while (k < a.length && k < b.length && a[k] === b[k]) k++;
  for (let i = k; i < b.length; i++) {
    const unit = b.slice(0, i + 1).join("/");
    if (hasMod(unit)) return to === `${unit}/mod.ts` ? null : `${unit}/mod.ts`;
  }
  return null;
}

/** Imports that reach behind another folder's `mod.ts`. */
export function deepImports(
  imports: readonly Import[],
  hasMod: (dir: string) => boolean,
): string[] {
  return imports.flatMap(({ from, to }) => {
    const mod = requiredModule(from, to, hasMod);
    return mod ? [`${from} imports ${to}; import ${mod} instead`] : [];
  });
}

/** Imports that climb the layer order (or reach a folder the layer must not use). */
export function climbingImports(imports: readonly Import[], layers = LAYERS): string[] {
  const rank = new Map(layers.flatMap((l, i) => l.folders.map((f) => [f, i] as const)));
  const out = new Set<string>();
  for (const { from, to } of imports) {
    const a = topFolder(from), b = topFolder(to);
    if (a === b) continue;
    for (const f of [a, b]) {
      if (!rank.has(f)) out.add(`${f}/ has no place in LAYERS (tests/architecture/layers.ts)`);
    }
    const ra = rank.get(a), rb = rank.get(b);
    if (ra === undefined || rb === undefined) continue;
    if (rb >= ra) out.add(`${from} imports ${to}: ${a} may not import ${b} (layer ${ra} → ${rb})`);
    else if (layers[ra].never?.includes(b)) {
      out.add(`${from} imports ${to}: ${a} must not use ${b}`);
    }
  }
  return [...out];
}

/**
 * The rooms of the folders split inside (docs/design.md, "Inside `trajectory/` and `gateway/`"),
 * lowest first, as the layers are: a room imports only rooms of a lower rank (and the files of the
 * folder around it). A new room needs a place here and in the design.
 */
export const ROOMS: Readonly<Record<string, readonly (readonly string[])[]>> = {
  trajectory: [["tree", "token_rows"], ["chains"], ["samples"], ["journaling"], [
    "turns",
    "export",
  ]],
  gateway: [["security"], ["http"], ["agent", "trainer", "operations"]],
};

/** Imports from one room of a folder into another that do not go down the room order. */
export function climbingRoomImports(imports: readonly Import[], rooms = ROOMS): string[] {
  const roomOf = (path: string) => {
    const [top, room, ...rest] = path.split("/");
    return rooms[top] && rest.length > 0 ? { top, room } : null;
  };
  const out = new Set<string>();
  for (const { from, to } of imports) {
    const a = roomOf(from), b = roomOf(to);
    if (!a || !b || a.top !== b.top || a.room === b.room) continue;
    const rank = (room: string) => rooms[a.top].findIndex((r) => r.includes(room));
    const ra = rank(a.room), rb = rank(b.room);
    for (const [room, r] of [[a.room, ra], [b.room, rb]] as const) {
      if (r < 0) out.add(`${a.top}/${room}/ has no place in ROOMS (tests/architecture/layers.ts)`);
    }
    if (ra >= 0 && rb >= ra) {
      out.add(`${from} imports ${to}: ${a.top}/${a.room}/ may not import ${a.top}/${b.room}/`);
    }
  }
  return [...out];
}

/** Strongly connected components with more than one node (Tarjan), each sorted. */
export function cycles(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>(), low = new Map<string, number>();
  const stack: string[] = [], onStack = new Set<string>(), out: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return out;
}

function graph(pairs: Iterable<[string, string]>): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const [a, b] of pairs) {
    if (a === b) continue;
    if (!edges.has(a)) edges.set(a, new Set());
    edges.get(a)!.add(b);
  }
  return edges;
}

/** Files that import each other in a loop (directly or through others). */
export function fileCycles(imports: readonly Import[]): string[][] {
  return cycles(graph(imports.map(({ from, to }) => [from, to])));
}

/**
 * Folders that import each other in a loop. A folder is the nearest directory with a `mod.ts`
 * (or the top-level folder); an import of a file of an enclosing folder is not an edge.
 */
export function folderCycles(
  imports: readonly Import[],
  hasMod: (dir: string) => boolean,
): string[][] {
  const folderOf = (path: string) => {
    const dir = dirOf(path);
    for (let i = dir.length; i > 1; i--) {
      if (hasMod(dir.slice(0, i).join("/"))) return dir.slice(0, i).join("/");
    }
    return topFolder(path);
  };
  return cycles(graph(imports.flatMap(({ from, to }) => {
    const a = folderOf(from), b = folderOf(to);
    return a.startsWith(b + "/") ? [] : [[a, b] as [string, string]];
  })));
}
