import assert from "node:assert/strict";
import { Hono } from "hono";
import { GenerationError } from "../../generation/mod.ts";
import { type Turn, TurnError } from "../../trajectory/mod.ts";
import { accessLog, GatewayMetrics, httpMetrics, operationsRoutes, Readiness } from "./mod.ts";
import { accessLine } from "./access_log.ts";
import { Counter, Gauge, Histogram, MetricsRegistry } from "./prometheus.ts";
import { failureKind } from "./gateway_metrics.ts";

Deno.test("Prometheus text: HELP/TYPE, labels escaped, cumulative histogram buckets", () => {
  const r = new MetricsRegistry();
  const c = r.add(new Counter("x_total", "Things."));
  c.inc({ kind: 'say "hi"\\\n' });
  c.inc({ kind: "plain" }, 2);
  c.inc({ kind: "plain" });
  r.add(new Gauge("x_level", "Level.", () => [[{}, 1.5]]));
  const h = r.add(new Histogram("x_seconds", "Latency.", [0.01, 0.1]));
  h.observe({ backend: "gate" }, 0.005);
  h.observe({ backend: "gate" }, 0.05);
  h.observe({ backend: "gate" }, 3);
  assert.equal(
    r.render(),
    [
      "# HELP x_total Things.",
      "# TYPE x_total counter",
      'x_total{kind="say \\"hi\\"\\\\\\n"} 1',
      'x_total{kind="plain"} 3',
      "# HELP x_level Level.",
      "# TYPE x_level gauge",
      "x_level 1.5",
      "# HELP x_seconds Latency.",
      "# TYPE x_seconds histogram",
      'x_seconds_bucket{backend="gate",le="0.01"} 1',
      'x_seconds_bucket{backend="gate",le="0.1"} 2',
      'x_seconds_bucket{backend="gate",le="+Inf"} 3',
      'x_seconds_sum{backend="gate"} 3.055',
      'x_seconds_count{backend="gate"} 3',
    ].join("\n") + "\n",
  );
});

Deno.test("GatewayMetrics: a count read from a database is awaited; one it cannot give reads NaN", async () => {
  const m = new GatewayMetrics();
  let db: Promise<number> = Promise.resolve(7);
  m.watch({ pendingRequests: () => db, rollouts: () => [], damagedSamples: () => 0 });
  assert.match(await m.scrape(), /^rollgate_pending_requests 7$/m);
  db = Promise.reject(new Error("the database is unreachable"));
  assert.match(await m.scrape(), /^rollgate_pending_requests NaN$/m);
});

Deno.test("GatewayMetrics: turns, tokens, added latency and errors per backend", async () => {
  const m = new GatewayMetrics();
  const active = { group: null, status: "active" as const, createdAt: 0 };
  m.watch({ pendingRequests: () => 4, rollouts: () => [active, active], damagedSamples: () => 0 });
  m.turnStarted("gate");
  m.turnStarted("gate");
  m.turnStarted("vllm");
  const turn = (promptLength: number, outputIds: number[], blackBox?: true) =>
    ({ promptLength, outputIds, blackBox }) as unknown as Turn;
  m.turnEnded({ backend: "gate", turn: turn(100, [9707, 11, 1879, 0, 1, 2, 151645]), addedMs: 3 });
  m.turnEnded({
    backend: "vllm",
    turn: turn(50, []),
    addedMs: 1,
    error: new GenerationError("engine_timeout", "vLLM did not answer in 600 s"),
  });
  const text = await m.scrape();
  const line = (prefix: string) => text.split("\n").find((l) => l.startsWith(prefix));
  assert.equal(
    line('rollgate_turns_total{backend="gate",outcome="done"}'),
    'rollgate_turns_total{backend="gate",outcome="done"} 1',
  );
  assert.match(line('rollgate_turns_total{backend="vllm"')!, /outcome="failed"} 1$/);
  assert.match(line('rollgate_turns_in_flight{backend="gate"}')!, / 1$/);
  assert.match(line('rollgate_turns_in_flight{backend="vllm"}')!, / 0$/);
  assert.match(line('rollgate_tokens_in_total{backend="gate"}')!, / 100$/);
  assert.match(line('rollgate_tokens_out_total{backend="gate"}')!, / 7$/);
  assert.match(line('rollgate_added_latency_seconds_bucket{backend="gate",le="0.0025"}')!, / 0$/);
  assert.match(line('rollgate_added_latency_seconds_bucket{backend="gate",le="0.005"}')!, / 1$/);
  assert.match(line('rollgate_errors_total{backend="vllm",kind="engine_timeout"}')!, / 1$/);
  assert.equal(line('rollgate_tokens_in_total{backend="vllm"}'), undefined, "failed: no tokens");
  assert.match(line("rollgate_pending_requests")!, / 4$/);
  assert.match(line("rollgate_active_rollouts")!, / 2$/);
  assert.match(line("rollgate_draining")!, / 0$/);
  assert.match(line("process_resident_memory_bytes")!, / \d+$/);
});

Deno.test("Readiness: ready only when every check passes; a throwing check fails", async () => {
  let loaded = false;
  const r = new Readiness()
    .add("model", () => loaded || "loading the model files")
    .add("journal", () => Promise.resolve(true));
  assert.deepEqual(await r.report(), {
    ready: false,
    checks: [
      { name: "model", ok: false, detail: "loading the model files" },
      { name: "journal", ok: true },
    ],
  });
  loaded = true;
  assert.equal((await r.report()).ready, true);
  r.add("disk", () => {
    throw new Error("EIO");
  });
  const report = await r.report();
  assert.equal(report.ready, false);
  assert.deepEqual(report.checks[2], { name: "disk", ok: false, detail: "check failed: EIO" });
});

Deno.test("operations routes: /health, /ready 200/503, /metrics behind the admin check", async () => {
  let ready: true | string = "starting";
  const metrics = new GatewayMetrics();
  const app = operationsRoutes({
    readiness: new Readiness().add("model", () => ready),
    metrics,
    adminToken: "ok-0123456789abcdef",
  });
  assert.deepEqual(await (await app.request("/health")).json(), { ok: true });
  const notReady = await app.request("/ready");
  assert.equal(notReady.status, 503);
  assert.equal((await notReady.json()).checks[0].detail, "starting");
  ready = true;
  assert.equal((await app.request("/ready")).status, 200);
  assert.equal((await app.request("/metrics")).status, 401);
  const scraped = await app.request("/metrics", {
    headers: { authorization: "Bearer ok-0123456789abcdef" },
  });
  assert.equal(scraped.status, 200);
  assert.match(scraped.headers.get("content-type")!, /^text\/plain; version=0\.0\.4/);
  assert.match(await scraped.text(), /# TYPE rollgate_turns_total counter/);
});

Deno.test("access log: one line per request, no query, headers or body", async () => {
  const lines: string[] = [];
  const metrics = new GatewayMetrics();
  const app = new Hono();
  app.use("*", accessLog((l) => lines.push(l)));
  app.use("*", httpMetrics(metrics));
  app.post("/api/rollouts", (c) => c.json({ id: "r1" }, 201));
  const res = await app.request("http://127.0.0.1:7860/api/rollouts?secret=q", {
    method: "POST",
    headers: { authorization: "Bearer sekrit-token", "content-type": "application/json" },
    body: JSON.stringify({ metadata: { prompt: "private words" } }),
  });
  assert.equal(res.status, 201);
  await app.request("http://127.0.0.1:7860/nowhere");
  assert.equal(lines.length, 2);
  assert.match(lines[0], /^\d{4}-\d\d-\d\dT[\d:.]+Z - POST \/api\/rollouts 201 \d+\.\dms$/);
  assert.match(lines[1], / GET \/nowhere 404 /);
  for (const secret of ["sekrit", "secret=q", "private words"]) {
    assert.ok(!lines.join("\n").includes(secret), secret);
  }
  assert.match(await metrics.scrape(), /rollgate_http_responses_total\{code="201"\} 1/);
  assert.match(await metrics.scrape(), /rollgate_http_requests_in_flight 0/);
});

Deno.test("accessLine format", () => {
  assert.equal(
    accessLine({
      time: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)),
      remote: "10.0.0.7",
      method: "GET",
      path: "/ready",
      status: 503,
      ms: 0.04,
    }),
    "2026-01-02T03:04:05.006Z 10.0.0.7 GET /ready 503 0.0ms",
  );
});

Deno.test("failureKind: the domain's kind, upstream_failed for hosted APIs, else internal", () => {
  const turn = (blackBox?: true) => ({ blackBox }) as unknown as Turn;
  const kind = (error: unknown, blackBox?: true) =>
    failureKind({ backend: "x", turn: turn(blackBox), addedMs: 0, error });
  assert.equal(kind(new TurnError("context_exceeded", "too long")), "context_exceeded");
  assert.equal(kind(new TurnError("shutting_down", "bye")), "shutting_down");
  assert.equal(kind(new GenerationError("trainer_failed", "oom")), "trainer_failed");
  assert.equal(kind(new Error("429 rate limited"), true), "upstream_failed");
  assert.equal(kind(new TypeError("x is undefined")), "internal");
});

Deno.test("GET /: a page for browsers, the same pointers as JSON for API clients", async () => {
  const app = operationsRoutes({ readiness: new Readiness(), metrics: new GatewayMetrics() });
  const html = await app.request("/", { headers: { accept: "text/html,application/xhtml+xml" } });
  assert.equal(html.status, 200);
  assert.match(html.headers.get("content-type") ?? "", /^text\/html/);
  const page = await html.text();
  for (const path of ["/ui", "/ready", "/health", "/metrics"]) {
    assert.ok(page.includes(`<a href="${path}">`), `the page links ${path}`);
  }
  assert.match(page, /needs the admin token if set/);
  assert.match(page, /&lt;id&gt;/, "placeholders are escaped, not links");
  assert.doesNotMatch(page, /https?:\/\//, "nothing is fetched from elsewhere");
  const json = await app.request("/", { headers: { accept: "application/json" } });
  assert.equal(json.status, 200);
  const body = await json.json();
  assert.equal(body.name, "rollgate");
  assert.deepEqual(
    Object.keys(body.endpoints),
    ["/ui", "/ready", "/health", "/metrics", "/api", "/rollout/<id>/v1"],
  );
  assert.equal((await app.request("/")).headers.get("content-type"), "application/json");
});
