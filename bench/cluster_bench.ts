/**
 * Load driver for the replicated gateway (real processes over real sockets: `main.ts serve`,
 * Debian's PostgreSQL and HAProxy, started here):
 *
 * 1. `journal`: one gateway with its SQLite journal against one replica with its journal in
 *    PostgreSQL, the same closed-loop load (agents one request at a time, trainer workers that
 *    answer at once with the scripted policy of `tests/cluster/load.ts`): CPU per turn of the
 *    gateway process and of the PostgreSQL server, and the agent's latency per turn (p50/p99),
 *    which with an instant trainer is what the gateway adds.
 * 2. `replicas`: turns per second with 1, 2 and 3 replicas behind HAProxy, same load.
 * 3. `failover`: three replicas behind HAProxy under load; one is killed with SIGKILL; how long
 *    until every rollout it held answered a turn again (with the default owner lease of 10 s,
 *    and with `--owner-lease 2`).
 * 4. `rows`: as `journal`, the trainer completing every turn with `routed_experts` of 48 layers ×
 *    top-8 (uint8, 384 bytes a position); also the bytes PostgreSQL's `token_rows` holds per
 *    position. (Not part of `all`.)
 * 5. `statements`: as `journal`, the replica only, on a server that keeps statement statistics
 *    (`pg_stat_statements`): the statements that took the server's time, with their calls and
 *    time each. (Not part of `all`.)
 * 6. `trips`: what one round trip to the database costs, the floor under a replica's cost per
 *    turn: CPU of the `postgres` client (this process, a replica's pool options) and of the
 *    PostgreSQL server per statement, 8 in flight, for `SELECT 1` and for a one-row `UPDATE`
 *    that commits (a claim or a completion is one). (Not part of `all`.)
 *
 * Run: `deno run -A bench/cluster_bench.ts [journal|replicas|failover|rows|statements|trips|all] [rollouts] [turns]`
 * (default all, 100 × 10).
 *
 * @module
 */
import { Buffer } from "node:buffer";
import postgres from "postgres";
import { scriptedLogprob } from "../runner/mod.ts";
import { type GatewayProcess, startGateway } from "../tests/support/gateway_process.ts";
import { startHaproxy } from "../tests/support/haproxy.ts";
import { type PostgresServer, startPostgres } from "../tests/support/postgres_server.ts";
import { scriptedReply } from "../tests/cluster/load.ts";
import { poolOptions } from "../journal/mod.ts";

const WHAT = Deno.args[0] ?? "all";
const ROLLOUTS = Number(Deno.args[1] ?? 100);
const TURNS = Number(Deno.args[2] ?? 10);
const WORKERS = 8;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// deno-lint-ignore no-explicit-any
type Json = any;

async function call(
  url: string,
  body?: unknown,
  headers = {},
): Promise<{ status: number; json: Json }> {
  try {
    const res = await fetch(url, {
      method: body === undefined ? "GET" : "POST",
      headers: { "content-type": "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  } catch {
    return { status: 0, json: null };
  }
}

/** CPU seconds (user + system) of a process and its children so far, from /proc. */
function cpuSeconds(pid: number): number {
  const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1].split(" ");
  // utime, stime, cutime, cstime (fields 14-17, 1-based, of the whole line)
  const ticks = [11, 12, 13, 14].reduce((n, i) => n + Number(fields[i]), 0);
  return ticks / 100;
}

/** The PostgreSQL server's processes (the postmaster and its backends). */
function postgresPids(): number[] {
  const out = new Deno.Command("pgrep", { args: ["-u", "postgres"] }).outputSync();
  return new TextDecoder().decode(out.stdout).split("\n").filter(Boolean).map(Number);
}

function postgresCpu(): number {
  let total = 0;
  for (const pid of postgresPids()) {
    try {
      total += cpuSeconds(pid);
    } catch { /* ended */ }
  }
  return total;
}

interface Run {
  turns: number;
  seconds: number;
  latencies: number[];
  /** Per rollout, when it last answered (ms since the epoch). */
  lastAnswer: Map<string, number>;
}

/** Routing of 48 layers × top-8 for positions `from … len(seq) − 2`, as `complete` takes it. */
function routing(seq: readonly number[], from: number) {
  const rows = Math.max(0, seq.length - 1 - from);
  const bytes = new Uint8Array(rows * 384);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + seq[from + (i / 384 | 0)]) % 128;
  return { dtype: "uint8", shape: [rows, 48, 8], data: Buffer.from(bytes).toString("base64") };
}

/** The closed-loop load against `url`; `during` runs beside it; `rows`: with routing rows. */
async function load(
  url: string,
  prefix: string,
  during?: (run: Run) => Promise<void>,
  rows = false,
) {
  const run: Run = { turns: 0, seconds: 0, latencies: [], lastAnswer: new Map() };
  const stop = new AbortController();
  const worker = async () => {
    while (!stop.signal.aborted) {
      const next = await call(`${url}/api/requests/next?wait=1`);
      if (next.status !== 200) {
        if (next.status !== 204) await sleep(50);
        continue;
      }
      const { prompt_ids, routed_experts_from } = next.json;
      const output_ids = scriptedReply(prompt_ids);
      const routed = rows
        ? { routed_experts: routing([...prompt_ids, ...output_ids], routed_experts_from) }
        : {};
      for (;;) {
        const done = await call(`${url}/api/requests/${next.json.request_id}/complete`, {
          output_ids,
          logprobs: output_ids.map((_, i) => scriptedLogprob(i)),
          finish_reason: "stop",
          ...routed,
        });
        if (done.status !== 0 && done.status < 500) break;
        await sleep(100);
      }
    }
  };
  const agent = async (i: number) => {
    const id = `${prefix}${i}`;
    let created;
    do created = await call(`${url}/api/rollouts`, { id }); while (created.status >= 500);
    const headers = { authorization: `Bearer ${created.json.token}` };
    const messages: { role: string; content: string }[] = [];
    for (let k = 0; k < TURNS; k++) {
      messages.push({ role: "user", content: `rollout ${id} step ${k}` });
      for (;;) {
        const t0 = performance.now();
        const r = await call(
          `${url}/rollout/${id}/v1/chat/completions`,
          { model: "m", messages },
          headers,
        );
        if (r.status === 200) {
          run.latencies.push(performance.now() - t0);
          run.lastAnswer.set(id, Date.now());
          messages.push({ role: "assistant", content: r.json.choices[0].message.content });
          run.turns++;
          break;
        }
        await sleep(100);
      }
    }
    await call(`${url}/api/rollouts/${id}/finish`, { reward: 1 });
  };
  const workers = Array.from({ length: WORKERS }, worker);
  const t0 = performance.now();
  const agents = Promise.all(Array.from({ length: ROLLOUTS }, (_, i) => agent(i)));
  await Promise.all([agents, during?.(run)]);
  run.seconds = (performance.now() - t0) / 1000;
  stop.abort();
  await Promise.all(workers);
  return run;
}

const pct = (xs: number[], p: number) => xs.toSorted((a, b) => a - b)[Math.floor(xs.length * p)];
const ms = (x: number) => `${x.toFixed(1)} ms`;

async function withPostgres<T>(
  fn: (pg: PostgresServer) => Promise<T>,
  settings: string[] = [],
): Promise<T> {
  const pg = await startPostgres(settings);
  try {
    return await fn(pg);
  } finally {
    await pg.stop();
  }
}

async function journalCost(rows = false) {
  const report = async (
    name: string,
    gw: GatewayProcess,
    pgCpu: () => number,
    transactions = () => Promise.resolve(0),
  ) => {
    const [c0, p0, t0] = [cpuSeconds(gw.pid), pgCpu(), await transactions()];
    const run = await load(gw.url, "J", undefined, rows);
    const [c1, p1, t1] = [cpuSeconds(gw.pid), pgCpu(), await transactions()];
    console.log(
      `${name}: ${run.turns} turns in ${run.seconds.toFixed(1)} s (${
        (run.turns / run.seconds).toFixed(0)
      } turns/s); gateway CPU ${(1000 * (c1 - c0) / run.turns).toFixed(2)} ms/turn` +
        (p1 > p0 ? `, PostgreSQL CPU ${(1000 * (p1 - p0) / run.turns).toFixed(2)} ms/turn` : "") +
        (t1 > t0 ? `, ${((t1 - t0) / run.turns).toFixed(1)} transactions/turn` : "") +
        `; agent latency p50 ${ms(pct(run.latencies, 0.5))}, p99 ${ms(pct(run.latencies, 0.99))}`,
    );
  };
  const single = await startGateway();
  await report("one gateway, SQLite journal", single, () => 0).finally(() => single.stop());
  await withPostgres(async (pg) => {
    const [replica] = await startReplicas(1, pg.url);
    // Round trips that commit, counted by the server (its statistics lag: read after a pause).
    const stats = postgres(pg.url, { max: 1, onnotice: () => {} });
    const transactions = async () => {
      await sleep(1_000);
      const [row] = await stats<{ n: string }[]>`
        SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = 'postgres'`;
      return Number(row.n);
    };
    await report("one replica, PostgreSQL journal", replica, postgresCpu, transactions)
      .finally(() => replica.stop());
    await stats.end();
    if (!rows) return;
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    const [kept] = await sql<{ bytes: string; positions: string; turns: string }[]>`
      SELECT pg_total_relation_size('token_rows') AS bytes,
        (SELECT sum((shape->>0)::int) FROM token_rows) AS positions,
        (SELECT count(*) FROM token_rows) AS turns`;
    await sql.end();
    console.log(
      `token_rows: ${kept.turns} turns, ${kept.positions} positions, ${kept.bytes} bytes (${
        (Number(kept.bytes) / Number(kept.positions)).toFixed(1)
      } bytes a position, table, TOAST and index)`,
    );
  });
}

/** The replica's load on a server keeping statement statistics: where the server's time goes. */
async function statementCost() {
  await withPostgres(async (pg) => {
    const [replica] = await startReplicas(1, pg.url);
    const stats = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      await stats`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
      await stats`SELECT pg_stat_statements_reset()`;
      const run = await load(replica.url, "S");
      const top = await stats<{ calls: string; ms: number; q: string }[]>`
        SELECT calls, total_exec_time AS ms,
          left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 90) AS q
        FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 12`;
      console.log(`statements a turn took the server's time on (${run.turns} turns):`);
      for (const t of top) {
        console.log(
          `  ${(t.ms / run.turns).toFixed(3)} ms/turn, ${
            (Number(t.calls) / run.turns).toFixed(2)
          } calls/turn, ${(1000 * t.ms / Number(t.calls)).toFixed(0)} µs each: ${t.q}`,
        );
      }
    } finally {
      await stats.end();
      await replica.stop();
    }
  }, ["shared_preload_libraries=pg_stat_statements"]);
}

/** CPU per statement of this process's `postgres` client and of the server, 8 in flight. */
async function roundTrips(statements = 20_000) {
  await withPostgres(async (pg) => {
    const sql = postgres(pg.url, poolOptions(10, 10));
    await sql`CREATE TABLE trip (id int PRIMARY KEY, n bigint)`;
    await sql`INSERT INTO trip SELECT i, 0 FROM generate_series(0, 99) i`;
    const kinds: [string, (i: number) => Promise<unknown>][] = [
      ["SELECT 1", () => sql`SELECT 1`],
      ["one-row UPDATE, committed", (i) => sql`UPDATE trip SET n = n + 1 WHERE id = ${i % 100}`],
    ];
    for (const [name, statement] of kinds) {
      let next = 0;
      const lane = async () => {
        while (next < statements) await statement(next++);
      };
      const [c0, p0, t0] = [cpuSeconds(Deno.pid), postgresCpu(), performance.now()];
      await Promise.all(Array.from({ length: 8 }, lane));
      const [c1, p1, t1] = [cpuSeconds(Deno.pid), postgresCpu(), performance.now()];
      const per = (x: number) => `${(1e6 * x / statements).toFixed(0)} µs`;
      console.log(
        `${name}: ${statements} statements in ${((t1 - t0) / 1000).toFixed(1)} s; client CPU ${
          per(c1 - c0)
        }, PostgreSQL CPU ${per(p1 - p0)} a statement`,
      );
    }
    await sql.end();
  });
}

function startReplicas(n: number, url: string, args: string[] = []) {
  return Promise.all(
    Array.from({ length: n }, () => startGateway(["--database-url", url, ...args])),
  );
}

async function replicaThroughput() {
  for (const n of [1, 2, 3]) {
    await withPostgres(async (pg) => {
      const replicas = await startReplicas(n, pg.url);
      const lb = await startHaproxy(replicas.map((r) => `127.0.0.1:${r.port}`));
      try {
        const run = await load(lb.url, "R");
        console.log(
          `${n} replica(s) behind HAProxy: ${run.turns} turns in ${run.seconds.toFixed(1)} s, ${
            (run.turns / run.seconds).toFixed(0)
          } turns/s; agent latency p50 ${ms(pct(run.latencies, 0.5))}, p99 ${
            ms(pct(run.latencies, 0.99))
          }`,
        );
      } finally {
        await lb.stop();
        for (const r of replicas) await r.stop();
      }
    });
  }
}

async function failover(leaseArgs: string[], label: string) {
  await withPostgres(async (pg) => {
    const replicas = await startReplicas(3, pg.url, leaseArgs);
    const lb = await startHaproxy(replicas.map((r) => `127.0.0.1:${r.port}`));
    const victim = replicas[1];
    const dead = /replica (\w+) of the gateway/.exec(victim.output())![1];
    try {
      await load(lb.url, "F", async (run) => {
        while (run.turns < ROLLOUTS * TURNS * 0.3) await sleep(20);
        const held = await heldBy(lb.url, victim.url);
        const killedAt = Date.now();
        await victim.kill("SIGKILL");
        // Every rollout it held answers a turn after the kill (or finished before).
        for (;;) {
          const back = held.filter((id) => (run.lastAnswer.get(id) ?? 0) > killedAt);
          if (back.length === held.length || run.turns >= ROLLOUTS * TURNS) {
            const firsts = held.map((id) => run.lastAnswer.get(id)! - killedAt);
            console.log(
              `kill -9 (${label}) of replica ${dead}, which held ${held.length} rollouts: first served again after ${
                Math.min(...firsts)
              } ms, all after ${Math.max(...firsts)} ms`,
            );
            return;
          }
          await sleep(20);
        }
      });
    } finally {
      await lb.stop();
      for (const r of replicas) await r.stop();
    }
  });
}

/** Rollouts a replica holds now (its own part of the gathered list). */
async function heldBy(_lb: string, replicaUrl: string): Promise<string[]> {
  const r = await call(`${replicaUrl}/api/rollouts`, undefined, { "x-rollgate-local": "1" });
  return r.json.rollouts.filter((x: { status: string }) => x.status === "active").map((
    x: { id: string },
  ) => x.id);
}

console.log(
  `rollouts ${ROLLOUTS} × ${TURNS} turns, ${WORKERS} trainer workers; load: ${
    Deno.loadavg().map((x) => x.toFixed(2)).join(" ")
  }`,
);
if (WHAT === "journal" || WHAT === "all") await journalCost();
if (WHAT === "rows") await journalCost(true);
if (WHAT === "statements") await statementCost();
if (WHAT === "trips") await roundTrips();
if (WHAT === "replicas" || WHAT === "all") await replicaThroughput();
if (WHAT === "failover" || WHAT === "all") {
  await failover([], "owner lease 10 s");
  await failover(["--owner-lease", "2"], "owner lease 2 s");
}
console.log(`load after: ${Deno.loadavg().map((x) => x.toFixed(2)).join(" ")}`);
