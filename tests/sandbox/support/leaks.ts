/**
 * Leak probes for sandbox tests: host processes whose command line mentions a string (a sandbox
 * root, a marker), and directory listings.
 *
 * @module
 */

/** PIDs of host processes whose command line contains `needle` (this process excluded). */
export async function processesMatching(needle: string): Promise<number[]> {
  const pids: number[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name) || Number(e.name) === Deno.pid) continue;
    try {
      const cmdline = (await Deno.readTextFile(`/proc/${e.name}/cmdline`)).replaceAll("\0", " ");
      if (cmdline.includes(needle)) pids.push(Number(e.name));
    } catch { /* exited meanwhile */ }
  }
  return pids;
}

/** Polls until no process matches `needle` or `ms` pass; returns the survivors. */
export async function waitNoProcesses(needle: string, ms = 3_000): Promise<number[]> {
  const until = Date.now() + ms;
  for (;;) {
    const left = await processesMatching(needle);
    if (left.length === 0 || Date.now() > until) return left;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Names of the entries of `dir`. */
export async function entries(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) names.push(e.name);
  return names.sort();
}

/** Whether `path` exists (without following a final symlink). */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}
