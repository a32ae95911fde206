/**
 * Connection caps that know a balancer: a trusted proxy's connections count in all only, its
 * requests per client behind it (the last `X-Forwarded-For` address that is not a trusted proxy,
 * so a client cannot pick its own by sending the header), and connections past a cap are still
 * read for health checks, up to a reserve.
 */
import assert from "node:assert/strict";
import { ConnectionCaps, isProbe, PROBE_RESERVE } from "./connection_caps.ts";

Deno.test("connection caps: a balancer's clients are counted by X-Forwarded-For; health checks pass every cap", () => {
  const caps = new ConnectionCaps({
    maxConnections: 100,
    maxConnectionsPerAddress: 2,
    trustedProxies: ["10.0.0.2", "10.1.0.0/16"],
  });
  // A client's own address: two connections, then only health checks.
  assert.equal(caps.admit("192.0.2.7").kind, "open");
  assert.equal(caps.admit("192.0.2.7").kind, "open");
  const third = caps.admit("192.0.2.7");
  assert.deepEqual(third, { kind: "probe", why: "2 connections from 192.0.2.7 are open" });
  assert.ok(isProbe("/ready") && isProbe("/health?x=1") && !isProbe("/api/status"));
  caps.leave("192.0.2.7", third);
  // The balancer: any number of connections (within the total), its clients two requests each.
  for (let i = 0; i < 50; i++) assert.equal(caps.admit("::ffff:10.0.0.2").kind, "open");
  assert.equal(caps.trusted("10.1.200.3"), true);
  assert.equal(caps.trusted("10.2.0.1"), false);
  const client = caps.clientOf("10.0.0.2", "203.0.113.9, 10.1.4.4");
  assert.equal(client, "203.0.113.9");
  // A header sent by the client itself names nothing: the balancer appended the real address.
  assert.equal(caps.clientOf("10.0.0.2", "198.51.100.1, 203.0.113.9"), "203.0.113.9");
  assert.equal(
    caps.clientOf("192.0.2.7", "203.0.113.9"),
    "192.0.2.7",
    "an untrusted peer's header",
  );
  const a = caps.enter(client), b = caps.enter(client), c = caps.enter(client);
  assert.ok("release" in a && "release" in b);
  assert.deepEqual(c, { refused: "2 requests from 203.0.113.9 are open" });
  a.release();
  assert.ok("release" in caps.enter(client));
  // Past the total, a reserve of connections is read for health checks, then none.
  for (let i = 0; i < 48; i++) assert.equal(caps.admit(`198.51.${i}.2`).kind, "open");
  const probes = Array.from({ length: PROBE_RESERVE }, () => caps.admit("198.51.100.3"));
  assert.ok(probes.every((p) => p.kind === "probe"));
  assert.equal(caps.admit("198.51.100.3").kind, "refused");
});
