/**
 * The Docker Engine API backend. Pure parts (raw-stream demux, tar) always run; the backend runs
 * against a real engine when one is available: an existing Docker/Podman socket, or a Podman
 * service this file starts (`apt-get install podman runc`). Otherwise those tests are ignored.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import {
  demuxRawStream,
  DockerApiError,
  DockerEngine,
  DockerProvider,
  evaluatePatch,
  loadTasks,
  rawFrame,
  SandboxError,
  SHIPPED_TASKS_DIR,
  tarOneFile,
  TIMEOUT_EXIT_CODE,
  untarFirstFile,
} from "../../sandbox/mod.ts";
import {
  type DockerTestEnv,
  dockerTestEnv,
  ensureTestImage,
  TEST_IMAGE,
} from "./support/docker_env.ts";
import { entries, exists } from "./support/leaks.ts";
import { skipGroup } from "../support/skips.ts";

Deno.test("docker: raw-stream frames split anywhere are demultiplexed in order", async () => {
  const bytes = new Uint8Array([
    ...rawFrame(1, "hello "),
    ...rawFrame(2, "warn\n"),
    ...rawFrame(1, "world\n"),
    ...rawFrame(1, new Uint8Array(0)),
  ]);
  for (const cut of [1, 3, 7, 8, 9, 13, 20]) {
    const body = ReadableStream.from([bytes.slice(0, cut), bytes.slice(cut)]);
    const got: string[] = [];
    await demuxRawStream(body, (s, p) => got.push(`${s}:${new TextDecoder().decode(p)}`));
    assert.deepEqual(got, ["1:hello ", "2:warn\n", "1:world\n", "1:"]);
  }
  await assert.rejects(demuxRawStream(ReadableStream.from([bytes.slice(0, 10)]), () => {}));
});

Deno.test("docker: one-file tar round-trips, long names included, readable by tar(1)", async () => {
  const data = new TextEncoder().encode("x".repeat(700));
  const long = `workspace/${"d/".repeat(60)}file.txt`;
  for (const name of ["tmp/a.txt", long]) {
    const tar = tarOneFile(name, data, 0o755);
    assert.equal(tar.length % 512, 0);
    assert.deepEqual(untarFirstFile(tar), { name, data });
    const dir = await Deno.makeTempDir();
    await Deno.writeFile(`${dir}/t.tar`, tar);
    const out = await new Deno.Command("tar", { args: ["-tvf", `${dir}/t.tar`] }).output();
    await Deno.remove(dir, { recursive: true });
    assert.ok(out.success);
    assert.match(new TextDecoder().decode(out.stdout), new RegExp(`^-rwxr-xr-x .* 700 .*${name}`));
  }
});

/** Command lines of the container's processes, one per line. */
const PS = `python3 -c 'import os
for p in os.listdir("/proc"):
    if p.isdigit():
        try: print(open("/proc/" + p + "/cmdline").read().replace(chr(0), " ").strip())
        except OSError: pass'`;

const POSSIBLE = (() => {
  const onPath = (n: string) =>
    (Deno.env.get("PATH") ?? "").split(":").some((d) => {
      try {
        return Deno.statSync(`${d}/${n}`).isFile;
      } catch {
        return false;
      }
    });
  return Boolean(Deno.env.get("DOCKER_HOST")) || onPath("podman") ||
    ["/var/run/docker.sock", "/run/podman/podman.sock"].some((p) => {
      try {
        return Deno.statSync(p).isSocket;
      } catch {
        return false;
      }
    });
})();
const ENV: DockerTestEnv | string = POSSIBLE
  ? await dockerTestEnv()
  : "no Docker API socket and no podman installed";

Deno.test({
  name: "docker: the backend against a real engine",
  ignore: skipGroup("docker backend", typeof ENV === "string" ? ENV : undefined),
}, async (t) => {
  const env = ENV as DockerTestEnv;
  const tempDir = await Deno.makeTempDir({ prefix: "rollgate-test-" });
  try {
    await ensureTestImage(env.socketPath);
    const docker = new DockerProvider({
      socketPath: env.socketPath,
      defaultImage: TEST_IMAGE,
      tempDir,
    });
    await docker.preflight();

    await t.step("exec: exit codes, stdin, env, cwd, timeout", async () => {
      const sbx = await docker.create({ image: "local", env: { GREETING: "hi" } });
      try {
        assert.deepEqual(await sbx.exec("echo out; echo err >&2; exit 3"), {
          exitCode: 3,
          stdout: "out\n",
          stderr: "err\n",
          timedOut: false,
        });
        assert.equal((await sbx.exec("cat", { stdin: "piped" })).stdout, "piped");
        assert.equal((await sbx.exec('echo "$GREETING $X"', { env: { X: "y" } })).stdout, "hi y\n");
        assert.equal((await sbx.exec("pwd", { cwd: "/tmp" })).stdout, "/tmp\n");
        assert.equal((await sbx.exec("true", { cwd: "/nonexistent" })).exitCode, 1);
        const r = await sbx.exec("sleep 987661 & sleep 987662", { timeoutMs: 500 });
        assert.equal(r.timedOut, true);
        assert.equal(r.exitCode, TIMEOUT_EXIT_CODE);
        const ps = await sbx.exec(PS);
        assert.deepEqual(ps.stdout.split("\n").filter((l) => l.startsWith("sleep 98766")), []);
      } finally {
        await sbx.kill();
      }
    });

    await t.step("spawn streams; files in and out", async () => {
      const sbx = await docker.create({ image: "local" });
      try {
        let released = false;
        const proc = await sbx.spawn(
          "echo one; while [ ! -e /tmp/go ]; do sleep 0.05; done; echo two",
          {
            onStdout(chunk) {
              if (!released && chunk.includes("one")) {
                released = true;
                sbx.writeFile("/tmp/go", "");
              }
            },
          },
        );
        assert.equal((await proc.wait()).stdout, "one\ntwo\n");
        const bytes = new Uint8Array(1000).map((_, i) => i % 256);
        await sbx.writeFile("deep/dir/blob.bin", bytes);
        assert.deepEqual(await sbx.readFile("/workspace/deep/dir/blob.bin"), bytes);
        await sbx.writeFile("run.sh", "#!/bin/sh\necho ran\n", { mode: 0o755 });
        assert.equal((await sbx.exec("./run.sh")).stdout, "ran\n");
        await assert.rejects(sbx.readFile("missing.txt"), SandboxError);
        await assert.rejects(sbx.readFile("deep"), SandboxError);
        const long = await sbx.spawn("sleep 987663");
        await long.kill();
        assert.equal((await long.wait()).exitCode, 137);
      } finally {
        await sbx.kill();
      }
    });

    await t.step("gateway bridge: only the rollout socket is reachable", async () => {
      const app = new Hono();
      app.post(
        "/rollout/:id/v1/echo",
        async (c) => c.json({ id: c.req.param("id"), ...await c.req.json() }),
      );
      const sbx = await docker.create({
        image: "local",
        gateway: { rolloutId: "d1", fetch: app.fetch },
      });
      const py = `python3 -c '
import json, socket, urllib.request
r = urllib.request.urlopen(urllib.request.Request("${sbx.gatewayUrl}/v1/echo", data=b"{\\"a\\": 1}"), timeout=10)
print(r.read().decode())
try:
    socket.create_connection(("1.1.1.1", 80), timeout=2); print("outside reachable")
except OSError:
    print("outside unreachable")'`;
      const r = await sbx.exec(py);
      const containerId = (sbx as unknown as { containerId: string }).containerId;
      await sbx.kill();
      assert.equal(r.stdout, '{"id":"d1","a":1}\noutside unreachable\n', r.stderr);
      const engine = new DockerEngine(env.socketPath);
      try {
        await assert.rejects(
          engine.call("GET", `/containers/${containerId}/json`),
          (e) => e instanceof DockerApiError && e.status === 404,
        );
      } finally {
        engine.close();
      }
      assert.deepEqual(await entries(tempDir), [], "bridge dir and socket removed");
    });

    await t.step("grader: gold 1, empty 0 in containers", async () => {
      const task = (await loadTasks(`${SHIPPED_TASKS_DIR}/py-slug`))[0];
      assert.equal((await evaluatePatch(docker, task, task.gold_patch)).reward, 1);
      assert.equal((await evaluatePatch(docker, task, "")).reward, 0);
    });

    await t.step("preflight names the socket when the engine is absent", async () => {
      const missing = new DockerProvider({ socketPath: `${tempDir}/nope.sock` });
      await assert.rejects(missing.preflight(), /nope\.sock.*--sandbox local/s);
    });
  } finally {
    await env.close();
    assert.equal(await exists(tempDir) && (await entries(tempDir)).length, 0);
    await Deno.remove(tempDir, { recursive: true });
  }
});
