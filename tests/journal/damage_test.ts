/**
 * A damaged journal is never restored silently (issue 21), with a real `main.ts serve` process:
 * a zero-length file, a corrupted page, a write-ahead log deleted or cut after `kill -9` each make
 * the gateway refuse to start with a message naming the file and what to do; a full disk (a small
 * tmpfs) makes it refuse new work with a clear 503 and write nothing more; a read-only data
 * directory is refused at start; once the cause is fixed it restarts with every acknowledged turn.
 * (A file system cannot be remounted read-only under a process writing to it, so "read-only" is
 * tested at start; a write failure while serving is the full disk's path.)
 *
 * @module
 */
import assert from "node:assert/strict";
import { type GatewayProcess, startGateway } from "../support/gateway_process.ts";
import { DENO } from "../support/gateway_process.ts";
import { skipGroup } from "../support/skips.ts";

const HELLO = [9707, 151645]; // "Hello<|im_end|>"
const ROOT = new URL("../../", import.meta.url).pathname;

type Json = Record<string, unknown> & { error?: { message: string } };

async function call(
  gw: GatewayProcess,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Json }> {
  const res = await fetch(gw.url + path, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : {} };
}

/**
 * One turn of rollout `id`: the agent asks, a trainer answers. Returns the agent's status (200:
 * acknowledged) and its answer.
 */
async function turn(gw: GatewayProcess, id: string, token: string, step: number) {
  const asking = call(gw, `/rollout/${id}/v1/chat/completions`, {
    model: "m",
    messages: [{ role: "user", content: `${id} step ${step} ${"pad ".repeat(500)}` }],
  }, { authorization: `Bearer ${token}` });
  // The trainer side: answers the request if one arrives (none does when the turn is refused).
  const next = await call(gw, `/api/requests/next?wait=2&rollout=${id}`).catch(() => null);
  if (next?.status === 200) {
    await call(gw, `/api/requests/${next.json.request_id}/complete`, {
      output_ids: HELLO,
      logprobs: [-0.5, -0.25],
      finish_reason: "stop",
    }).catch(() => null);
  }
  return await asking;
}

/** Creates rollouts and runs turns until `stopWhen` says so; what was acknowledged, per rollout. */
async function work(
  gw: GatewayProcess,
  rollouts: number,
  turns: number,
  stopWhen: (status: number, json: Json) => boolean = () => false,
): Promise<{ acked: Map<string, number>; refusal?: Json }> {
  const acked = new Map<string, number>();
  for (let i = 0; i < rollouts; i++) {
    const id = `r${i}`;
    const created = await call(gw, "/api/rollouts", { id });
    if (created.status !== 201) {
      if (stopWhen(created.status, created.json)) return { acked, refusal: created.json };
      throw new Error(`create ${id}: ${created.status} ${JSON.stringify(created.json)}`);
    }
    acked.set(id, 0);
    for (let k = 0; k < turns; k++) {
      const r = await turn(gw, id, created.json.token as string, k);
      if (r.status === 200) {
        acked.set(id, k + 1);
        continue;
      }
      if (stopWhen(r.status, r.json)) return { acked, refusal: r.json };
      throw new Error(`${id} turn ${k}: ${r.status} ${JSON.stringify(r.json)}`);
    }
  }
  return { acked };
}

/** Every acknowledged rollout and turn is back after a restart. */
async function assertRestored(gw: GatewayProcess, acked: Map<string, number>) {
  for (const [id, turns] of acked) {
    const r = await call(gw, `/api/rollouts/${id}`);
    assert.equal(r.status, 200, `rollout ${id} restored`);
    const t = r.json.turns as { done: number };
    assert.ok(t.done >= turns, `rollout ${id}: ${t.done} turns done, ${turns} acknowledged`);
  }
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** Runs `main.ts serve` on `dir` expecting it to refuse; returns what it printed. */
async function refusedStart(dir: string): Promise<string> {
  const out = await new Deno.Command(DENO, {
    args: ["run", "-A", ROOT + "main.ts", "serve", "--port", String(freePort()), "--data-dir", dir],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 1, `refused to start:\n${text}`);
  return text;
}

/** A gateway on `dir` with some acknowledged work, then killed with SIGKILL. */
async function killedWithWork(dir: string): Promise<Map<string, number>> {
  const gw = await startGateway(["--data-dir", dir]);
  try {
    const { acked } = await work(gw, 6, 3);
    await gw.kill("SIGKILL");
    return acked;
  } finally {
    await gw.kill("SIGKILL");
  }
}

async function withDir(fn: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-damage-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

Deno.test("damaged journal: a zero-length file after kill -9 is refused, naming the file and what to do", async () => {
  await withDir(async (dir) => {
    await killedWithWork(dir);
    await Deno.truncate(`${dir}/journal.sqlite`, 0);
    const said = await refusedStart(dir);
    assert.match(said, new RegExp(`the journal ${dir}/journal.sqlite is damaged`));
    assert.match(said, /were acknowledged/);
    assert.match(said, /Keep a copy of/);
  });
});

Deno.test("damaged journal: a deleted write-ahead log after kill -9 is refused", async () => {
  await withDir(async (dir) => {
    await killedWithWork(dir);
    await Deno.remove(`${dir}/journal.sqlite-wal`);
    const said = await refusedStart(dir);
    assert.match(said, /write-ahead log .*journal\.sqlite-wal was deleted or cut/);
    assert.match(said, new RegExp(`remove ${dir}/journal.sqlite-acked`));
  });
});

Deno.test("damaged journal: a write-ahead log cut in half after kill -9 is refused; without the mark it starts with what is left", async () => {
  await withDir(async (dir) => {
    await killedWithWork(dir);
    const wal = `${dir}/journal.sqlite-wal`;
    await Deno.truncate(wal, Math.floor((await Deno.stat(wal)).size / 2));
    const said = await refusedStart(dir);
    assert.match(said, /were acknowledged/);
    // The operator's way out, as the message says: remove the mark, start with what is left.
    await Deno.remove(`${dir}/journal.sqlite-acked`);
    const gw = await startGateway(["--data-dir", dir]);
    try {
      assert.match(gw.output(), /restored \d+ rollout/);
    } finally {
      await gw.kill("SIGKILL");
    }
  });
});

Deno.test("damaged journal: a corrupted page is refused by quick_check", async () => {
  await withDir(async (dir) => {
    const gw = await startGateway(["--data-dir", dir]);
    await work(gw, 6, 3);
    await gw.kill("SIGTERM"); // a clean stop: everything is in the main file
    const path = `${dir}/journal.sqlite`;
    const file = await Deno.open(path, { write: true });
    const size = (await Deno.stat(path)).size;
    assert.ok(size >= 4 * 4096, `the journal has pages to damage (${size} bytes)`);
    await file.seek(2 * 4096, Deno.SeekMode.Start);
    await file.write(new Uint8Array(4096).fill(0xa5));
    file.close();
    const said = await refusedStart(dir);
    assert.match(said, /is damaged: (quick_check|.*malformed)/);
    assert.match(said, /\.recover/);
  });
});

const mountSkip = (() => {
  if (Deno.build.os !== "linux") return "tmpfs mounts need Linux";
  try {
    const probe = Deno.makeTempDirSync({ prefix: "rollgate-mount-probe-" });
    const ok = new Deno.Command("mount", { args: ["-t", "tmpfs", "-o", "size=1m", "tmpfs", probe] })
      .outputSync().success;
    if (ok) new Deno.Command("umount", { args: [probe] }).outputSync();
    Deno.removeSync(probe);
    return ok ? undefined : "cannot mount a tmpfs here (needs root)";
  } catch (e) {
    return `cannot mount a tmpfs here: ${(e as Error).message}`;
  }
})();

async function withTmpfs(size: string, fn: (dir: string) => Promise<void>) {
  const mnt = await Deno.makeTempDir({ prefix: "rollgate-tmpfs-" });
  const mount = (...args: string[]) => {
    const out = new Deno.Command("mount", { args }).outputSync();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
  };
  mount("-t", "tmpfs", "-o", `size=${size}`, "tmpfs", mnt);
  try {
    await fn(mnt);
  } finally {
    new Deno.Command("umount", { args: ["-l", mnt] }).outputSync();
    await Deno.remove(mnt, { recursive: true }).catch(() => {});
  }
}

const refusedForJournal = (status: number, json: Json) =>
  status === 503 && /cannot be written/.test(json.error?.message ?? "");

Deno.test({
  name:
    "full disk: new work is refused with a clear 503, nothing more is written; with space back every acknowledged turn is restored",
  ignore: skipGroup("journal on a full tmpfs", mountSkip),
  async fn() {
    await withTmpfs("4m", async (dir) => {
      const data = `${dir}/data`;
      const gw = await startGateway(["--data-dir", data]);
      try {
        // Leave a little room, then work until the journal cannot take more.
        const room = 384 * 1024;
        const free = Number(
          new TextDecoder().decode(
            new Deno.Command("df", { args: ["--output=avail", "-B1", dir] }).outputSync().stdout,
          ).trim().split("\n").at(-1),
        );
        await Deno.writeFile(`${dir}/filler`, new Uint8Array(Math.max(0, free - room)));
        const { acked, refusal } = await work(gw, 400, 3, refusedForJournal);
        assert.ok(refusal, "the journal ran out of space");
        assert.match(refusal.error!.message, /the disk is full/);
        assert.match(refusal.error!.message, new RegExp(`${data}/journal.sqlite`));
        assert.ok(acked.size > 0, "some work was acknowledged before");
        // Refused from now on, with the same clear answer, and /ready says why.
        const again = await call(gw, "/api/rollouts", { id: "late" });
        assert.equal(again.status, 503);
        const ready = await call(gw, "/ready");
        assert.equal(ready.status, 503);
        assert.match(JSON.stringify(ready.json), /disk is full/);
        const size = (await Deno.stat(`${data}/journal.sqlite-wal`)).size;
        await call(gw, "/api/rollouts", { id: "later" });
        assert.equal((await Deno.stat(`${data}/journal.sqlite-wal`)).size, size, "nothing more");

        await Deno.remove(`${dir}/filler`);
        await gw.kill("SIGKILL");
        await gw.restart();
        await assertRestored(gw, acked);
        assert.doesNotMatch(gw.output(), /unknown turn/);
      } finally {
        await gw.kill("SIGKILL");
      }
    });
  },
});

Deno.test({
  name:
    "read-only file system: a gateway killed with work in flight does not start on it, and restarts whole once writable",
  ignore: skipGroup("journal on a read-only tmpfs", mountSkip),
  async fn() {
    await withTmpfs("64m", async (dir) => {
      const data = `${dir}/data`;
      const gw = await startGateway(["--data-dir", data]);
      try {
        const { acked } = await work(gw, 4, 3);
        await gw.kill("SIGKILL"); // the write-ahead log still holds the work
        const remount = (mode: string) => {
          const out = new Deno.Command("mount", { args: ["-o", `remount,${mode}`, dir] })
            .outputSync();
          assert.ok(out.success, new TextDecoder().decode(out.stderr));
        };
        remount("ro");
        const said = await refusedStart(data);
        assert.match(said, new RegExp(`cannot open the journal in ${data}`));
        assert.match(said, /writable --data-dir/);
        remount("rw");
        await gw.restart();
        await assertRestored(gw, acked);
      } finally {
        await gw.kill("SIGKILL");
      }
    });
  },
});
