/**
 * TEST DOUBLE of E2B, on 127.0.0.1, for driving the real `e2b` SDK offline.
 *
 * - Control plane, as the SDK calls it: `POST /v2/sandboxes` (checks `X-API-Key`, answers
 *   `{sandboxID, envdVersion, …}`), `GET /v2/sandboxes` (the list), `DELETE /sandboxes/{id}`.
 * - envd (the in-sandbox daemon; the SDK reaches it through `sandboxUrl` with an
 *   `E2b-Sandbox-Id` header): Connect-JSON `process.Process/Start` (server streaming: start, data,
 *   end events in 5-byte envelopes), `process.Process/SendSignal`, `GET/POST /files`, `/health`.
 *   Each fake sandbox is a real local bubblewrap sandbox, so commands really run — offline.
 *
 * Every request is recorded (`requests`) so tests can check what the SDK sent.
 *
 * @module
 */
import {
  LOCAL_MOUNTS,
  LocalProvider,
  type LocalSandbox,
  type Proc,
  shellQuote,
  toBase64,
} from "../../../sandbox/mod.ts";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

interface FakeBox {
  id: string;
  templateID: string;
  metadata: Record<string, string>;
  local: LocalSandbox;
  procs: Map<number, { proc: Proc; signalled: boolean }>;
  nextPid: number;
}

const enc = new TextEncoder();

function envelope(flags: number, message: unknown): Uint8Array {
  const json = enc.encode(JSON.stringify(message));
  const out = new Uint8Array(5 + json.length);
  out[0] = flags;
  new DataView(out.buffer).setUint32(1, json.length);
  out.set(json, 5);
  return out;
}

function unenvelope(bytes: Uint8Array): unknown {
  const len = new DataView(bytes.buffer, bytes.byteOffset).getUint32(1);
  return JSON.parse(new TextDecoder().decode(bytes.subarray(5, 5 + len)));
}

/** The E2B test double. */
export class FakeE2B {
  readonly requests: RecordedRequest[] = [];
  readonly boxes = new Map<string, FakeBox>();
  /** When set, `SendSignal` answers success but leaves the process running (a lost kill). */
  loseSignals = false;
  #server: Deno.HttpServer<Deno.NetAddr>;
  #local: LocalProvider;
  #count = 0;

  /**
   * `agents`: each box binds this repository's agent CLIs (as an image with them baked in would
   * have them) and shares the host's network unless created with `allowInternetAccess: false` (the
   * gateway-only allow list is approximated by the host's network, where the gateway listens).
   * Without it, boxes have no agent CLIs and no network.
   */
  constructor(
    readonly apiKey: string,
    tempDir?: string,
    readonly options: { agents?: boolean } = {},
  ) {
    this.#local = new LocalProvider(
      options.agents ? { tempDir } : { tempDir, agentsDir: null, agentsVenv: null },
    );
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      (req) => this.#handle(req),
    );
  }

  get url(): string {
    return `http://127.0.0.1:${this.#server.addr.port}`;
  }

  async close(): Promise<void> {
    await Promise.all([...this.boxes.values()].map((b) => b.local.kill()));
    this.boxes.clear();
    await this.#server.shutdown();
  }

  async #record(req: Request, path: string): Promise<unknown> {
    const type = req.headers.get("content-type") ?? "";
    let body: unknown;
    if (type.includes("multipart/form-data")) body = await req.formData();
    else if (type.includes("connect+json")) {
      body = unenvelope(new Uint8Array(await req.arrayBuffer()));
    } else {
      const text = await req.text();
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
    }
    this.requests.push({
      method: req.method,
      path,
      headers: Object.fromEntries(req.headers),
      body,
    });
    return body;
  }

  async #handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const path = url.pathname;
    const body = await this.#record(req, path + url.search);
    const box = this.boxes.get(req.headers.get("e2b-sandbox-id") ?? "");
    if (path === "/health") return new Response(null, { status: 204 });
    if (path.startsWith("/process.Process/") || path === "/files") {
      if (!box) return Response.json({ code: 502, message: "sandbox not found" }, { status: 502 });
      if (path === "/process.Process/Start") return this.#start(box, body as StartRequest);
      if (path === "/process.Process/SendSignal") {
        return await this.#signal(box, body as SignalRequest);
      }
      return await this.#files(box, req.method, url.searchParams.get("path") ?? "", body);
    }
    if (req.headers.get("x-api-key") !== this.apiKey) {
      return Response.json({ code: 401, message: "Invalid API key" }, { status: 401 });
    }
    if (req.method === "POST" && path === "/v2/sandboxes") {
      const b = body as {
        templateID: string;
        metadata?: Record<string, string>;
        allowInternetAccess?: boolean;
      };
      const id = `fake${++this.#count}`;
      const online = this.options.agents && b.allowInternetAccess !== false;
      const local = await this.#local.create({ image: "local", network: online ? "full" : "none" });
      if (this.options.agents) {
        // envd runs commands in a login shell, whose /etc/profile resets PATH: keep the sandbox's
        // (agent CLIs first) as a template that installed them would.
        const path = (await local.exec('printf %s "$PATH"')).stdout;
        await local.writeFile(`${LOCAL_MOUNTS.home}/.profile`, `export PATH=${shellQuote(path)}\n`);
      }
      this.boxes.set(id, {
        id,
        templateID: b.templateID,
        metadata: b.metadata ?? {},
        local,
        procs: new Map(),
        nextPid: 100,
      });
      return Response.json({
        sandboxID: id,
        templateID: b.templateID,
        clientID: "fake",
        envdVersion: "0.4.0",
        envdAccessToken: "fake-envd-token",
      }, { status: 201 });
    }
    if (req.method === "GET" && path === "/v2/sandboxes") {
      return Response.json([...this.boxes.values()].map((b) => ({
        sandboxID: b.id,
        templateID: b.templateID,
        clientID: "fake",
        startedAt: new Date().toISOString(),
        endAt: new Date(Date.now() + 3_600_000).toISOString(),
        cpuCount: 2,
        memoryMB: 512,
        diskSizeMB: 1024,
        metadata: b.metadata,
        state: "running",
        envdVersion: "0.4.0",
      })));
    }
    const kill = /^\/sandboxes\/([^/]+)$/.exec(path);
    if (req.method === "DELETE" && kill) {
      const target = this.boxes.get(kill[1]);
      if (!target) return Response.json({ code: 404, message: "not found" }, { status: 404 });
      this.boxes.delete(kill[1]);
      await target.local.kill();
      return new Response(null, { status: 204 });
    }
    return Response.json({ code: 404, message: `fake: no route ${req.method} ${path}` }, {
      status: 404,
    });
  }

  #start(box: FakeBox, r: StartRequest): Response {
    const pid = box.nextPid++;
    const argv = [r.process.cmd, ...(r.process.args ?? [])].map(shellQuote).join(" ");
    const stream = new TransformStream<Uint8Array, Uint8Array>();
    const writer = stream.writable.getWriter();
    const send = (flags: number, msg: unknown) =>
      writer.write(envelope(flags, msg)).catch(() => {});
    // Like envd: the start event goes out once the process exists (a kill right after it must
    // find the process); output produced before that waits behind it.
    let early: unknown[] | undefined = [];
    const data = (key: "stdout" | "stderr") => (chunk: string) => {
      const msg = { event: { data: { [key]: toBase64(enc.encode(chunk)) } } };
      if (early) early.push(msg);
      else send(0, msg);
    };
    box.local.spawn(argv, {
      cwd: r.process.cwd,
      env: r.process.envs,
      onStdout: data("stdout"),
      onStderr: data("stderr"),
    }).then(async (proc) => {
      const entry = { proc, signalled: false };
      box.procs.set(pid, entry);
      send(0, { event: { start: { pid } } });
      for (const msg of early ?? []) send(0, msg);
      early = undefined;
      const res = await proc.wait();
      box.procs.delete(pid);
      // Like envd: a signalled process ends with exit code -1 and "signal: killed".
      const end = entry.signalled || res.exitCode === 137
        ? { exitCode: -1, exited: false, status: "signal: killed", error: "signal: killed" }
        : { exitCode: res.exitCode, exited: true, status: `exit status ${res.exitCode}` };
      await send(0, { event: { end } });
      await send(2, {});
      await writer.close().catch(() => {});
    }, async (err) => {
      await send(2, { error: { code: "internal", message: String(err) } });
      await writer.close().catch(() => {});
    });
    return new Response(stream.readable, {
      headers: { "content-type": "application/connect+json" },
    });
  }

  async #signal(box: FakeBox, r: SignalRequest): Promise<Response> {
    const entry = box.procs.get(r.process.pid);
    if (!entry) {
      return Response.json({ code: "not_found", message: "process not found" }, { status: 404 });
    }
    if (this.loseSignals) return Response.json({});
    entry.signalled = true;
    await entry.proc.kill();
    return Response.json({});
  }

  async #files(box: FakeBox, method: string, path: string, body: unknown): Promise<Response> {
    if (method === "POST") {
      const file = (body as FormData).get("file") as File;
      await box.local.writeFile(path, new Uint8Array(await file.arrayBuffer()));
      return Response.json([{ name: path.slice(path.lastIndexOf("/") + 1), path, type: "file" }]);
    }
    try {
      return new Response((await box.local.readFile(path)).slice(), {
        headers: { "content-type": "application/octet-stream" },
      });
    } catch {
      return Response.json({ code: 404, message: `path '${path}' does not exist` }, {
        status: 404,
      });
    }
  }
}

interface StartRequest {
  process: { cmd: string; args?: string[]; envs?: Record<string, string>; cwd?: string };
}

interface SignalRequest {
  process: { pid: number };
  signal: string;
}
