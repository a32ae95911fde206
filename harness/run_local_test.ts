import assert from "node:assert/strict";
import type { Harness, LaunchOptions } from "./harness.ts";
import { runLocal } from "./run_local.ts";

/** A harness whose "CLI" is `/bin/sh -c <script>`; completion = exit code 0. */
function shHarness(script: string, env: Record<string, string> = {}): Harness {
  return {
    name: "pi",
    protocol: "chat",
    registry: "npm",
    package: "none",
    version: "0",
    bin: "sh",
    shell: { kind: "tool", name: "bash", argument: "command" },
    install: [],
    quirks: [],
    configFiles: () => ({ prepared: "yes" }),
    prepare: async (home) => await Deno.writeTextFile(`${home}/prepared`, "yes"),
    env: (o) => ({ HOME: o.home, ...env }),
    args: () => ["-c", script],
    completion: (stdout, code) => ({ ok: code === 0, finalText: stdout.trim() }),
  };
}

async function withDirs(fn: (o: LaunchOptions) => Promise<void>): Promise<void> {
  const tmp = await Deno.makeTempDir({ prefix: "rollgate-run-local-" });
  try {
    await Deno.mkdir(`${tmp}/work`);
    await fn({
      gatewayUrl: "http://127.0.0.1:1",
      rolloutId: "r",
      token: "t",
      model: "m",
      workdir: `${tmp}/work`,
      home: `${tmp}/home`,
    });
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
}

Deno.test("runLocal: explicit env only, cwd = workdir, stdin at EOF, prepare ran", async () => {
  await withDirs(async (o) => {
    const h = shHarness('pwd; cat; env | sort; cat "$HOME/prepared"', { FOO: "bar" });
    const run = await runLocal(h, "x", o, { binDir: "/bin", nodeDir: "/opt/node/bin" });
    assert.equal(run.exitCode, 0, run.stderr);
    const out = run.stdout.split("\n");
    assert.equal(out[0], o.workdir);
    const env = out.filter((l) => /^[A-Z_]+=/.test(l)).map((l) => l.split("=")[0]);
    // sh itself adds PWD (and may add SHLVL, _); nothing is inherited from this process.
    assert.deepEqual(env.filter((k) => !["PWD", "SHLVL", "_", "OLDPWD"].includes(k)), [
      "FOO",
      "HOME",
      "PATH",
    ]);
    assert.ok(out.includes("PATH=/bin:/opt/node/bin:/usr/local/bin:/usr/bin"), run.stdout);
    assert.equal(out.at(-1), "yes");
    assert.equal(run.completion.ok, true);
    assert.equal(run.timedOut, false);
  });
});

Deno.test("runLocal: the budget kills the whole process group", async () => {
  await withDirs(async (o) => {
    const h = shHarness("sleep 30 & sleep 30; echo never");
    const started = Date.now();
    const run = await runLocal(h, "x", o, { binDir: "/bin", timeoutMs: 300, killGraceMs: 200 });
    assert.ok(Date.now() - started < 5_000, "returned promptly (the background sleep died too)");
    assert.equal(run.timedOut, true);
    assert.equal(run.completion.ok, false);
    assert.match(run.completion.error ?? "", /timed out after 300 ms/);
    assert.ok(!run.stdout.includes("never"));
  });
});

Deno.test("runLocal: a harness's result file reaches its completion; a stale one does not", async () => {
  await withDirs(async (o) => {
    const write = 'mkdir -p "$HOME/out"; printf "%s" "$1" > "$HOME/out/result.json"';
    const h: Harness = {
      ...shHarness(write),
      resultFile: "out/result.json",
      args: (prompt) => ["-c", write, "sh", prompt],
      completion: (_stdout, code, result) => ({ ok: code === 0, finalText: result }),
    };
    const run = await runLocal(h, '{"submitted":true}', o, { binDir: "/bin" });
    assert.equal(run.completion.finalText, '{"submitted":true}');
    // Same HOME, a run that writes nothing: the previous run's file is not its outcome.
    const silent = await runLocal({ ...h, args: () => ["-c", "true"] }, "x", o, { binDir: "/bin" });
    assert.equal(silent.completion.finalText, undefined);
  });
});
