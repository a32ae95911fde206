/**
 * Replicas as hard as one gateway (issue 31), with real PostgreSQL, real HAProxy and real
 * gateway processes:
 *
 * - a non-owner buffered any body before checking anything: a 1 GiB body with no token took a
 *   replica from 675 to 2,202 MB, then got a 503 "retry". Now the token and the cap are checked
 *   before a byte of the body is read;
 * - agent bodies over 16 MiB got 503 on non-owners (the trainer cap was applied to them);
 * - a rollout's token on a missing rollout's path (404) and on another rollout's (403) told ids
 *   apart, on replicas too;
 * - 6,300 long polls through HAProxy exhausted the 2,048 connections a replica takes from one
 *   address, health checks included: every replica was marked down for ~60 s. Now connections
 *   from the balancer (`--trusted-proxies`) count per client behind it, and health checks are
 *   answered past every cap.
 */
import assert from "node:assert/strict";
import { haproxyMissing, startHaproxy } from "../support/haproxy.ts";
import { postgresMissing, startPostgres } from "../support/postgres_server.ts";
import { skipGroup } from "../support/skips.ts";
import { startGateway } from "../support/gateway_process.ts";
import { call, sleep, startReplicas } from "./replicas.ts";

const ADMIN = "rg_admin_cluster_hardening_0123456789";
const admin = { authorization: `Bearer ${ADMIN}` };

/** Resident memory of a process (kB), from /proc. */
function rssKb(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]);
}

/**
 * Sends `head` and then up to `total` bytes of body (chunked), stopping once the server answers;
 * returns the answer's first line and how many bytes went out before it.
 */
async function bigBody(port: number, head: string[], total: number, chunked: boolean) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(new TextEncoder().encode([...head, "", ""].join("\r\n")));
  let answer = "";
  const reading = (async () => {
    const buf = new Uint8Array(4096);
    try {
      const n = await conn.read(buf);
      if (n) answer = new TextDecoder().decode(buf.subarray(0, n));
    } catch { /* closed */ }
  })();
  const piece = new Uint8Array(1 << 20).fill(0x61);
  const frame = chunked
    ? new Uint8Array([
      ...new TextEncoder().encode(`${piece.length.toString(16)}\r\n`),
      ...piece,
      13,
      10,
    ])
    : piece;
  let sent = 0;
  try {
    while (sent < total && !answer) {
      await conn.write(frame);
      sent += piece.length;
    }
  } catch { /* the server stopped taking it */ }
  await reading;
  try {
    conn.close();
  } catch { /* closed */ }
  return { status: answer.split("\r\n")[0], sent };
}

Deno.test({
  name:
    "cluster: a non-owner checks token and size before reading a body (1 GiB without a token costs no memory), serves agent bodies over the trainer cap, and does not tell rollout ids apart",
  ignore: skipGroup("replicated gateway (PostgreSQL)", postgresMissing()),
  async fn() {
    const pg = await startPostgres();
    // The replicas run with an admin token: a call without its rollout's token is refused.
    const [owner, other] = await Promise.all([0, 1].map(() =>
      startGateway(
        ["--database-url", pg.url, "--owner-lease", "2", "--trusted-proxies", "127.0.0.1"],
        { ROLLGATE_ADMIN_TOKEN: ADMIN },
      )
    ));
    try {
      const created = await call(`${owner.url}/api/rollouts`, {
        body: { id: "h1" },
        headers: admin,
      });
      assert.equal(created.status, 201, JSON.stringify(created.json));
      const path = "/rollout/h1/v1/chat/completions";
      const before = rssKb(other.pid);
      // No token, 1 GiB chunked: refused at the head, the body never read.
      const noToken = await bigBody(
        other.port,
        [
          `POST ${path} HTTP/1.1`,
          "Host: 127.0.0.1",
          "Content-Type: application/json",
          "Transfer-Encoding: chunked",
        ],
        1 << 30,
        true,
      );
      assert.match(noToken.status, /^HTTP\/1.1 401/);
      // Its token, a declared 1 GiB: over the agent cap (64 MiB), refused before reading.
      const tooBig = await bigBody(
        other.port,
        [
          `POST ${path} HTTP/1.1`,
          "Host: 127.0.0.1",
          "Content-Type: application/json",
          `Authorization: Bearer ${created.json.token}`,
          `Content-Length: ${1 << 30}`,
        ],
        1 << 30,
        false,
      );
      assert.match(tooBig.status, /^HTTP\/1.1 413/);
      const grew = rssKb(other.pid) - before;
      console.log(
        `1 GiB bodies at a non-owner: ${noToken.sent >> 20} and ${
          tooBig.sent >> 20
        } MiB sent before the answer; the replica grew ${grew} kB`,
      );
      assert.ok(grew < 100_000, `the replica grew by ${grew} kB`);
      assert.ok((await call(`${other.url}/health`)).status === 200, "alive");

      // 20 MiB agent body (a long field the protocol ignores) through the non-owner: served.
      const agent = call(`${other.url}${path}`, {
        headers: { authorization: `Bearer ${created.json.token}` },
        body: {
          model: "m",
          messages: [{ role: "user", content: "hi" }],
          user: "x".repeat(20 << 20),
        },
        timeoutMs: 120_000,
      });
      const next = await call(`${owner.url}/api/requests/next?wait=60&rollout=h1`, {
        headers: admin,
        timeoutMs: 70_000,
      });
      assert.equal(next.status, 200, JSON.stringify(next.json));
      const done = await call(`${other.url}/api/requests/${next.json.request_id}/complete`, {
        headers: admin,
        body: { output_ids: [9707, 151645], finish_reason: "stop" },
      });
      assert.equal(done.status, 200, JSON.stringify(done.json));
      const answered = await agent;
      assert.equal(answered.status, 200, JSON.stringify(answered.json).slice(0, 300));

      // Ids are not told apart: a rollout's token on a missing and on another rollout's path get
      // the same 403; without a token, the same 401; at either replica.
      const second = await call(`${owner.url}/api/rollouts`, {
        body: { id: "h2" },
        headers: admin,
      });
      for (const at of [owner, other]) {
        const ask = (id: string, token?: string) =>
          call(`${at.url}/rollout/${id}/v1/chat/completions`, {
            headers: token ? { authorization: `Bearer ${token}` } : {},
            body: { model: "m", messages: [{ role: "user", content: "probe" }] },
          });
        const [missing, foreign] = [
          await ask("nope", created.json.token),
          await ask("h2", created.json.token),
        ];
        assert.deepEqual([missing.status, foreign.status], [403, 403]);
        assert.match(missing.json.error.message, /this token belongs to another rollout than nope/);
        const [bare, bare2] = [await ask("nope"), await ask("h2")];
        assert.deepEqual([bare.status, bare2.status], [401, 401]);
        assert.match(bare.json.error.message, /rollout nope requires its token/);
      }
      assert.equal(second.status, 201);
    } finally {
      await owner.stop();
      await other.stop();
      await pg.stop();
    }
  },
});

Deno.test({
  name:
    "cluster: 6,000 long polls through HAProxy leave every replica healthy, and the queue still serves",
  ignore: skipGroup("replicated gateway behind HAProxy", postgresMissing() ?? haproxyMissing()),
  async fn() {
    const pg = await startPostgres();
    // The per-address cap is 1,000 here so that the balancer's 2,000 connections to each replica
    // pass it, as 6,300 polls passed the default 2,048; the trainers are 60 hosts behind it.
    const replicas = await startReplicas(
      3,
      pg.url,
      ["--max-connections-per-address", "1000"],
      "default",
    );
    const lb = await startHaproxy(replicas.map((r) => `127.0.0.1:${r.port}`));
    const POLLS = 6_000;
    try {
      // A trainer acknowledges what it gets at once (else it is offered again after 10 s).
      const polls = Array.from({ length: POLLS }, async (_, i) => {
        const p = await call(`${lb.url}/api/requests/next?wait=25`, {
          timeoutMs: 60_000,
          headers: { "x-forwarded-for": `10.0.${i % 60}.1` },
        });
        if (p.status === 200) {
          const ack = await call(`${lb.url}/api/requests/${p.json.request_id}/ack`, { body: {} });
          assert.equal(ack.status, 200, JSON.stringify(ack.json));
        }
        return p;
      });
      // While they wait: every replica stays ready, checked directly.
      const notReady: string[] = [];
      for (let i = 0; i < 10; i++) {
        await sleep(1_000);
        for (const r of replicas) {
          const ready = await call(`${r.url}/ready`, { timeoutMs: 10_000 });
          if (ready.status !== 200) {
            notReady.push(`${r.url}: ${ready.status} ${JSON.stringify(ready.json)}`);
          }
        }
      }
      // The queue still serves under them: an agent's request reaches one of the polls.
      const created = await call(`${lb.url}/api/rollouts`, { body: { id: "lp1" } });
      assert.equal(created.status, 201, JSON.stringify(created.json));
      const agent = call(`${lb.url}/rollout/lp1/v1/chat/completions`, {
        headers: { authorization: `Bearer ${created.json.token}` },
        body: { model: "m", messages: [{ role: "user", content: "hi" }] },
      });
      const ended = await Promise.all(polls);
      const got = ended.filter((p) => p.status === 200);
      assert.equal(got.length, 1, "one poll got the agent's request");
      const done = await call(`${lb.url}/api/requests/${got[0].json.request_id}/complete`, {
        body: { output_ids: [9707, 151645], finish_reason: "stop" },
      });
      assert.equal(done.status, 200, JSON.stringify(done.json));
      assert.equal((await agent).status, 200);
      const statuses: Record<number, number> = {};
      for (const p of ended) statuses[p.status] = (statuses[p.status] ?? 0) + 1;
      console.log(`${POLLS} long polls through HAProxy ended: ${JSON.stringify(statuses)}`);
      assert.deepEqual(statuses, { 200: 1, 204: POLLS - 1 }, "every poll ended as a poll does");
      assert.deepEqual(notReady, [], "a replica was not ready under the polls");
      assert.doesNotMatch(lb.output(), /is DOWN/, "HAProxy took a replica out of service");
    } finally {
      await lb.stop();
      for (const r of replicas) await r.stop();
      await pg.stop();
    }
  },
});
