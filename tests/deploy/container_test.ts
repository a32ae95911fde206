/**
 * The container recipe end to end: the image is built with Podman from bases made on this machine
 * (debootstrap + `podman import`, no image registry), run as a user would run it, and driven from
 * the host with the Python client: a rollout through the gate with samples back, the health check,
 * `/metrics` counting the turn, a non-root process, the public-bind refusal, and SIGTERM draining
 * an in-flight turn before exiting 0. Skipped (and listed in `npm test`'s last line, with the
 * reason) where Podman cannot run.
 */
import assert from "node:assert/strict";
import {
  buildImage,
  freePort,
  localBases,
  must,
  podmanUnavailable,
  run,
  RUN_FLAGS,
  waitFor200,
} from "./support/podman.ts";
import { skipGroup } from "../support/skips.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const DRIVER = new URL("./drive_gateway.py", import.meta.url).pathname;
const ignore = skipGroup("container image (podman)", (await podmanUnavailable()) ?? undefined);

const ADMIN_TOKEN = `rg-admin-${crypto.randomUUID()}`;
// Qwen3 ids of "Hello<|im_end|>" and "Hi<|im_end|>", as the Python driver sends them.
const HELLO = [9707, 151645];

async function drive(...args: string[]): Promise<Record<string, unknown>> {
  const python = Deno.statSync(ROOT + ".venv/bin/python3").isFile
    ? ROOT + ".venv/bin/python3"
    : "python3";
  const out = await run(python, [DRIVER, ...args]);
  if (out.code !== 0) {
    throw new Error(`drive_gateway.py ${args[0]} failed:\n${out.stderr}${out.stdout}`);
  }
  return JSON.parse(out.stdout);
}

function metricValue(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(series + " "));
  assert.ok(line, `no ${series} in /metrics:\n${text}`);
  return Number(line.slice(series.length + 1));
}

Deno.test({
  name: "container: built from a local Debian base, driven from the host, drained by SIGTERM",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  const id = crypto.randomUUID().slice(0, 8);
  const tag = `localhost/rollgate-test:${id}`;
  const name = `rollgate-test-${id}`;
  const bases = await localBases();
  const buildSeconds = await buildImage(tag, bases);
  try {
    const size = Number(await must("podman", ["image", "inspect", tag, "--format", "{{.Size}}"]));
    console.log(
      `image ${tag}: built in ${buildSeconds.toFixed(1)} s, ${(size / 1e6).toFixed(0)} MB`,
    );

    await t.step("a public bind without ROLLGATE_ADMIN_TOKEN refuses to start", async () => {
      const out = await run("podman", ["run", "--rm", ...RUN_FLAGS, "--network", "none", tag]);
      assert.equal(out.code, 1);
      assert.match(out.stderr, /refusing to listen on 0\.0\.0\.0 without ROLLGATE_ADMIN_TOKEN/);
    });

    const port = freePort();
    await must("podman", [
      "run",
      "--detach",
      "--name",
      name,
      ...RUN_FLAGS,
      "--publish",
      `127.0.0.1:${port}:7860`,
      "--env",
      `ROLLGATE_ADMIN_TOKEN=${ADMIN_TOKEN}`,
      "--env",
      "ROLLGATE_DRAIN_GRACE=30",
      tag,
    ]);
    const url = `http://127.0.0.1:${port}`;
    try {
      const coldStart = await waitFor200(`${url}/ready`, 60_000);
      console.log(`cold start to /ready: ${coldStart.toFixed(2)} s`);

      await t.step("the image runs serve on 0.0.0.0:7860 as UID 1000, not root", async () => {
        const user = await must("podman", [
          "image",
          "inspect",
          tag,
          "--format",
          "{{.Config.User}}",
        ]);
        assert.equal(user.trim(), "1000:1000");
        const status = await must("podman", ["exec", name, "cat", "/proc/1/status"]);
        assert.match(status, /^Uid:\s+1000\s+1000\s+1000\s+1000$/m);
        const logs = await must("podman", ["logs", name]);
        assert.match(logs, /listening on http:\/\/0\.0\.0\.0:7860/);
        assert.match(logs, /journal \/data\/journal\.sqlite\)/, "the journal is on, in /data");
      });

      await t.step("the HEALTHCHECK reports healthy", async () => {
        const out = await run("podman", ["healthcheck", "run", name]);
        assert.equal(out.code, 0, out.stderr);
        const health = await must("podman", [
          "inspect",
          name,
          "--format",
          "{{.State.Health.Status}}",
        ]);
        assert.equal(health.trim(), "healthy");
      });

      await t.step("a rollout through the gate, driven by the Python client", async () => {
        const r = await drive("rollout", url, ADMIN_TOKEN);
        assert.equal(r.healthy, true);
        assert.equal(r.agent_status, 200);
        assert.equal(r.agent_content, "Hello");
        assert.equal(r.wrong_token_status, 401);
        const prompt = r.prompt_ids as number[];
        const samples = r.samples as { input_ids: number[]; loss_mask: number[]; reward: number }[];
        assert.equal(samples.length, 1);
        assert.deepEqual(samples[0].input_ids, [...prompt, ...HELLO]);
        assert.deepEqual(samples[0].loss_mask, [...prompt.map(() => 0), 1, 1]);
        assert.equal(samples[0].reward, 1);
      });

      await t.step("/metrics counts the turn (and needs the admin token)", async () => {
        const denied = await fetch(`${url}/metrics`);
        await denied.body?.cancel();
        assert.equal(denied.status, 401);
        const res = await fetch(`${url}/metrics`, {
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        });
        const text = await res.text();
        assert.equal(metricValue(text, 'rollgate_turns_total{backend="gate",outcome="done"}'), 1);
        assert.ok(metricValue(text, 'rollgate_tokens_in_total{backend="gate"}') > 0);
        assert.equal(metricValue(text, 'rollgate_tokens_out_total{backend="gate"}'), HELLO.length);
        assert.equal(
          metricValue(text, 'rollgate_added_latency_seconds_count{backend="gate"}'),
          1,
        );
        assert.equal(metricValue(text, "rollgate_pending_requests"), 0);
      });

      await t.step("SIGTERM: no new turns, the in-flight turn finishes, exit 0", async () => {
        const r = await drive(
          "drain",
          url,
          ADMIN_TOKEN,
          "--",
          "podman",
          "kill",
          "--signal",
          "TERM",
          name,
        );
        assert.equal(r.ready_status, 503);
        assert.match(JSON.stringify(r.ready), /draining/);
        assert.equal(r.new_turn_status, 503);
        assert.match(JSON.stringify(r.new_turn_body), /shutting down/);
        assert.equal(r.in_flight_status, 200);
        assert.equal(r.in_flight_content, "Hi");
        const exit = await must("podman", ["wait", name]);
        assert.equal(exit.trim(), "0");
        const logs = await run("podman", ["logs", name]);
        assert.match(logs.stdout + logs.stderr, /drained: 1 turn finished/);
      });
    } finally {
      await run("podman", ["rm", "--force", "--time", "0", name]);
    }
  } finally {
    await run("podman", ["rmi", "--force", tag]);
  }
});
