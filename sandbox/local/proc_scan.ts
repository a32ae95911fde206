/**
 * Finding host processes through `/proc`, for teardown that does not rely on signals cascading:
 * a sandbox's `bwrap` processes all carry its root directory on their command line, and a PID
 * namespace dies with its init (`bwrap`'s child), so killing every process naming the root ends
 * everything the sandbox ran.
 *
 * @module
 */

function pids(): number[] {
  const out: number[] = [];
  try {
    for (const e of Deno.readDirSync("/proc")) {
      if (/^\d+$/.test(e.name)) out.push(Number(e.name));
    }
  } catch { /* no /proc: nothing to find */ }
  return out;
}

/** PIDs whose command line contains `needle` (this process excluded). */
export function processesWithArg(needle: string): number[] {
  const found: number[] = [];
  for (const pid of pids()) {
    if (pid === Deno.pid) continue;
    try {
      const cmdline = Deno.readTextFileSync(`/proc/${pid}/cmdline`).replaceAll("\0", " ");
      if (cmdline.includes(needle)) found.push(pid);
    } catch { /* exited meanwhile */ }
  }
  return found;
}

/** PIDs whose parent is `parent`. */
export function childrenOf(parent: number): number[] {
  const found: number[] = [];
  for (const pid of pids()) {
    try {
      const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
      // Fields after the command name, which is in parentheses and may contain spaces.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === parent) found.push(pid);
    } catch { /* exited meanwhile */ }
  }
  return found;
}

/** Whether `pid` is stopped (by a signal) or gone. */
export function stoppedOrGone(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const state = stat[stat.lastIndexOf(")") + 2];
    return state === "T" || state === "t" || state === "Z" || state === "X";
  } catch {
    return true;
  }
}

/** SIGKILLs `pid`, ignoring processes that are already gone. */
export function killPid(pid: number): void {
  try {
    Deno.kill(pid, "SIGKILL");
  } catch { /* already gone */ }
}

/**
 * SIGKILLs every process whose command line contains `needle` until none is left (zombies do not
 * count: they have an empty command line), for at most `ms`.
 */
export async function killAllWithArg(needle: string, ms = 3_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const left = processesWithArg(needle);
    if (left.length === 0 || Date.now() > until) return;
    left.forEach(killPid);
    await new Promise((r) => setTimeout(r, 20));
  }
}
