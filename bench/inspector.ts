/**
 * The V8 inspector of a gateway process started with `--inspect=127.0.0.1:PORT`, for load
 * drivers: a full garbage collection, the heap's size, and a heap snapshot summarized by what
 * holds the bytes (self size per node type and constructor), so a memory bench can say what its
 * peak is made of without a browser.
 *
 * @module
 */

interface Pending {
  resolve(v: unknown): void;
  reject(e: Error): void;
}

export class Inspector {
  #next = 1;
  readonly #pending = new Map<number, Pending>();
  readonly #chunks: string[] = [];

  private constructor(readonly socket: WebSocket) {
    socket.onmessage = (e) => {
      const msg = JSON.parse(e.data as string);
      if (msg.method === "HeapProfiler.addHeapSnapshotChunk") {
        this.#chunks.push(msg.params.chunk);
        return;
      }
      const p = msg.id !== undefined ? this.#pending.get(msg.id) : undefined;
      if (!p) return;
      this.#pending.delete(msg.id);
      if (msg.error) p.reject(new Error(JSON.stringify(msg.error)));
      else p.resolve(msg.result);
    };
  }

  /** Connects to the first target of the inspector at `127.0.0.1:port`. */
  static async connect(port: number): Promise<Inspector> {
    const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
    const socket = new WebSocket(targets[0].webSocketDebuggerUrl);
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onerror = () => reject(new Error("cannot reach the inspector"));
    });
    return new Inspector(socket);
  }

  call(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.#next++;
    this.socket.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve, reject) => this.#pending.set(id, { resolve, reject }));
  }

  /** A full collection, then the heap's used and total bytes. */
  async collect(): Promise<{ usedSize: number; totalSize: number }> {
    await this.call("HeapProfiler.collectGarbage");
    return await this.call("Runtime.getHeapUsage") as { usedSize: number; totalSize: number };
  }

  /**
   * glibc's `malloc_trim(0)` in the inspected process (what its allocator keeps of freed native
   * memory goes back to the system); false where it cannot run.
   */
  async mallocTrim(): Promise<boolean> {
    const { result } = await this.call("Runtime.evaluate", {
      expression: `(() => { try { return Deno.dlopen("libc.so.6", { malloc_trim: ` +
        `{ parameters: ["usize"], result: "i32" } }).symbols.malloc_trim(0n) >= 0; } ` +
        `catch { return false; } })()`,
      returnByValue: true,
    }) as { result: { value: boolean } };
    return result.value;
  }

  /** glibc's `malloc_stats()` in the inspected process (printed on its stderr). */
  async mallocStats(): Promise<void> {
    await this.call("Runtime.evaluate", {
      expression: `(() => { try { Deno.dlopen("libc.so.6", { malloc_stats: ` +
        `{ parameters: [], result: "void" } }).symbols.malloc_stats(); } catch { } })()`,
    });
  }

  /** A heap snapshot (after a full collection), summarized: the largest holders of self size. */
  async snapshotSummary(top = 25): Promise<HeapSummary> {
    return summarize(await this.#snapshot(), top);
  }

  /**
   * What died between two heap snapshots `gapMs` apart, by what it is: what lived long enough to
   * be in the first (reachable at its full collection) and was gone by the second.
   */
  async diedBetweenSnapshots(gapMs: number, top = 30): Promise<HeapSummary> {
    const before = objectsOf(await this.#snapshot());
    await new Promise((r) => setTimeout(r, gapMs));
    const after = new Set([...objectsOf(await this.#snapshot())].map((o) => o.id));
    return tally([...before].filter((o) => !after.has(o.id)), top);
  }

  /** A heap snapshot, taken after a full collection. */
  async #snapshot(): Promise<Snapshot> {
    this.#chunks.length = 0;
    await this.call("HeapProfiler.enable");
    await this.call("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
    const snapshot = JSON.parse(this.#chunks.join(""));
    this.#chunks.length = 0;
    return snapshot;
  }

  /**
   * Starts sampling allocations (every `intervalBytes` on average): all of them, only those still
   * alive when sampling stops (`live`), or those no scavenge collected (`tenured`: promoted or
   * allocated old, then alive or collected by a mark-compact, what the major collections take;
   * plus what the last scavenge had not reached yet).
   */
  async startAllocationSampling(
    intervalBytes = 64 * 1024,
    kept: "all" | "live" | "tenured" = "all",
  ): Promise<void> {
    await this.call("HeapProfiler.enable");
    await this.call("HeapProfiler.startSampling", {
      samplingInterval: intervalBytes,
      includeObjectsCollectedByMajorGC: kept !== "live",
      includeObjectsCollectedByMinorGC: kept === "all",
    });
  }

  /**
   * Stops sampling: bytes allocated per function (self, not callees) and its `depth - 1` callers,
   * most first.
   */
  async stopAllocationSampling(
    top = 30,
    depth = 2,
  ): Promise<{ where: string; bytes: number }[]> {
    const { profile } = await this.call("HeapProfiler.stopSampling") as {
      profile: { head: SamplingNode };
    };
    const byWhere = new Map<string, number>();
    const walk = (node: SamplingNode, stack: string[]) => {
      const f = node.callFrame;
      const file = f.url.slice(f.url.lastIndexOf("/") + 1);
      const here = [`${f.functionName || "(anonymous)"} ${file}:${f.lineNumber + 1}`, ...stack];
      if (node.selfSize > 0) {
        const key = here.slice(0, depth).join(" ← ");
        byWhere.set(key, (byWhere.get(key) ?? 0) + node.selfSize);
      }
      for (const child of node.children) walk(child, here);
    };
    walk(profile.head, []);
    return [...byWhere].map(([where, bytes]) => ({ where, bytes }))
      .sort((a, b) => b.bytes - a.bytes).slice(0, top);
  }

  /** Starts the sampling CPU profiler (a sample every `intervalUs`). */
  async startCpuProfile(intervalUs = 200): Promise<void> {
    await this.call("Profiler.enable");
    await this.call("Profiler.setSamplingInterval", { interval: intervalUs });
    await this.call("Profiler.start");
  }

  /**
   * Stops the CPU profiler: milliseconds of self time per function (with `depth - 1` callers),
   * most first, and the profile's whole span.
   */
  async stopCpuProfile(
    top = 30,
    depth = 1,
  ): Promise<{ totalMs: number; functions: { where: string; ms: number }[] }> {
    const { profile } = await this.call("Profiler.stop") as { profile: CpuProfile };
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const name = (id: number) => {
      const f = byId.get(id)!.callFrame;
      const file = f.url.slice(f.url.lastIndexOf("/") + 1);
      return `${f.functionName || "(anonymous)"} ${file}:${f.lineNumber + 1}`;
    };
    const ms = new Map<string, number>();
    for (let i = 0; i < profile.samples.length; i++) {
      const frames: string[] = [];
      for (
        let id: number | undefined = profile.samples[i];
        id !== undefined && frames.length < depth;
        id = parent.get(id)
      ) {
        frames.push(name(id));
      }
      const key = frames.join(" ← ");
      ms.set(key, (ms.get(key) ?? 0) + profile.timeDeltas[i] / 1000);
    }
    const functions = [...ms].map(([where, t]) => ({ where, ms: t }))
      .sort((a, b) => b.ms - a.ms).slice(0, top);
    return { totalMs: (profile.endTime - profile.startTime) / 1000, functions };
  }

  /**
   * Stops the CPU profiler: milliseconds per part, each sample given to the part `classify`
   * names for its stack (leaf first), and per leaf (with three callers) within its part.
   */
  async stopCpuProfileParts(
    classify: (stack: CallFrame[]) => string,
  ): Promise<{ totalMs: number; parts: Map<string, number>; leaves: Map<string, number> }> {
    const { profile } = await this.call("Profiler.stop") as { profile: CpuProfile };
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    const partOf = new Map<number, [string, string]>();
    const parts = new Map<string, number>(), leaves = new Map<string, number>();
    const name = (f: CallFrame) =>
      `${f.functionName || "(anonymous)"} ${f.url.slice(f.url.lastIndexOf("/") + 1)}:${
        f.lineNumber + 1
      }`;
    for (let i = 0; i < profile.samples.length; i++) {
      const leaf = profile.samples[i];
      let known = partOf.get(leaf);
      if (known === undefined) {
        const stack: CallFrame[] = [];
        for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
          stack.push(byId.get(id)!.callFrame);
        }
        const part = classify(stack);
        // The leaf and the three frames above it, to say what in the part costs.
        partOf.set(leaf, known = [part, `${part}: ${stack.slice(0, 4).map(name).join(" ← ")}`]);
      }
      const ms = profile.timeDeltas[i] / 1000;
      parts.set(known[0], (parts.get(known[0]) ?? 0) + ms);
      leaves.set(known[1], (leaves.get(known[1]) ?? 0) + ms);
    }
    return { totalMs: (profile.endTime - profile.startTime) / 1000, parts, leaves };
  }

  close(): void {
    this.socket.close();
  }
}

/** A frame of a CPU profile's stack. */
export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface CpuProfile {
  nodes: {
    id: number;
    callFrame: CallFrame;
    children?: number[];
  }[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

export interface HeapSummary {
  totalBytes: number;
  /** `type:name` (e.g. `array:(object elements)`, `object:Turn`) → self bytes and count. */
  holders: { what: string; bytes: number; count: number }[];
}

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

interface SnapshotObject {
  /** Stable across the snapshots of one process. */
  id: number;
  /** `type:name`; strings and code by type alone (their names are their contents). */
  what: string;
  size: number;
}

function* objectsOf(s: Snapshot): Generator<SnapshotObject> {
  const fields = s.snapshot.meta.node_fields;
  const width = fields.length;
  const typeAt = fields.indexOf("type"), nameAt = fields.indexOf("name");
  const sizeAt = fields.indexOf("self_size"), idAt = fields.indexOf("id");
  const types = s.snapshot.meta.node_types[0];
  for (let i = 0; i < s.nodes.length; i += width) {
    const type = types[s.nodes[i + typeAt]];
    const named = type === "object" || type === "native" || type === "array" || type === "closure";
    const what = `${type}:${named ? s.strings[s.nodes[i + nameAt]] : ""}`;
    yield { id: s.nodes[i + idAt], what, size: s.nodes[i + sizeAt] };
  }
}

/** Self bytes and count by `what`, the `top` largest. */
function tally(objects: Iterable<SnapshotObject>, top: number): HeapSummary {
  const byWhat = new Map<string, { bytes: number; count: number }>();
  let totalBytes = 0;
  for (const { what, size } of objects) {
    totalBytes += size;
    const entry = byWhat.get(what) ?? { bytes: 0, count: 0 };
    entry.bytes += size;
    entry.count++;
    byWhat.set(what, entry);
  }
  const holders = [...byWhat].map(([what, v]) => ({ what, ...v }))
    .sort((a, b) => b.bytes - a.bytes).slice(0, top);
  return { totalBytes, holders };
}

function summarize(s: Snapshot, top: number): HeapSummary {
  const { totalBytes, holders } = tally(objectsOf(s), top);
  const fields = s.snapshot.meta.node_fields;
  const width = fields.length;
  const typeAt = fields.indexOf("type"), nameAt = fields.indexOf("name");
  const sizeAt = fields.indexOf("self_size");
  const types = s.snapshot.meta.node_types[0];
  if (Deno.env.get("ROLLGATE_BENCH_STRINGS")) {
    // Which strings: grouped by their first 40 characters.
    const byStart = new Map<string, { bytes: number; count: number }>();
    for (let i = 0; i < s.nodes.length; i += width) {
      if (types[s.nodes[i + typeAt]] !== "string") continue;
      const start = s.strings[s.nodes[i + nameAt]].slice(0, 40);
      const e = byStart.get(start) ?? { bytes: 0, count: 0 };
      e.bytes += s.nodes[i + sizeAt];
      e.count++;
      byStart.set(start, e);
    }
    const topStrings = [...byStart].sort((a, b) => b[1].count - a[1].count).slice(0, 40);
    for (const [start, e] of topStrings) {
      console.log(`  string ${JSON.stringify(start)}: ${e.count} × (${e.bytes} bytes)`);
    }
  }
  return { totalBytes, holders };
}
