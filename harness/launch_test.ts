import assert from "node:assert/strict";
import type { Harness, LaunchOptions } from "./harness.ts";
import { CLI_MISSING_EXIT_CODE, CLI_MISSING_MARKER, sandboxLaunch, shellWord } from "./launch.ts";
import { codex, pi } from "./mod.ts";

const o: LaunchOptions = {
  gatewayUrl: "http://127.0.0.1:8787",
  rolloutId: "r_1",
  token: "tok-1",
  model: "rollgate-policy",
  workdir: "/workspace",
  home: "/home/agent/",
};

Deno.test("sandboxLaunch: config files under HOME, env, one exec < /dev/null", () => {
  const run = sandboxLaunch(codex, "Fix it: don't break 'quotes'", o, {
    ROLLGATE_ROLLOUT_ID: "r_1",
  });
  assert.deepEqual(Object.keys(run.files), ["/home/agent/.codex/config.toml"]);
  assert.equal(run.env.CODEX_HOME, "/home/agent/.codex");
  assert.equal(run.env.ROLLGATE_ROLLOUT_ID, "r_1");
  assert.equal(run.env.PATH, undefined, "PATH stays the sandbox's");
  const lines = run.command.split("\n");
  assert.equal(lines[0], "mkdir -p /home/agent/tmp");
  assert.equal(lines.at(-2), "cd /workspace");
  assert.equal(
    lines.at(-1),
    `exec codex exec --json --skip-git-repo-check --strict-config ` +
      `'Fix it: don'\\''t break '\\''quotes'\\''' < /dev/null`,
  );
  assert.ok(
    run.command.includes(
      "npm install -g --no-fund --no-audit --loglevel=error @openai/codex@0.169.0",
    ),
  );
  assert.equal(Object.keys(sandboxLaunch(pi, "p", o).files).length, 2);
});

/** A harness whose CLI is `bin`, installed by `install`. */
function fake(bin: string, install: string[]): Harness {
  return {
    ...pi,
    bin,
    install,
    configFiles: () => ({ "conf/x.txt": "x" }),
    env: () => ({ FOO: "bar" }),
    args: (prompt) => ["-c", `echo "$FOO:$1:$(cat)"`, "sh", prompt],
  };
}

async function bash(command: string, env: Record<string, string>, cwd: string) {
  // stdin is an open pipe nobody writes to: only the command's own `< /dev/null` lets `cat` end.
  const child = new Deno.Command("bash", {
    args: ["-c", command],
    env: { PATH: "/usr/bin:/bin", ...env },
    clearEnv: true,
    cwd,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out = await child.output();
  await child.stdin.close().catch(() => {});
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("launch command: CLI runs with stdin at EOF; a missing CLI is a clear 127", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "rollgate-launch-" });
  try {
    const opts = { ...o, workdir: tmp, home: `${tmp}/home` };
    const ok = sandboxLaunch(fake("sh", ["exit 1"]), "hello world", opts);
    const r = await bash(ok.command, ok.env, "/");
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "bar:hello world:\n", "stdin was /dev/null (cat read nothing)");
    assert.ok((await Deno.stat(`${tmp}/home/tmp`)).isDirectory);

    const failing = sandboxLaunch(fake("no-such-cli-xyz", ["echo installing; exit 3"]), "p", opts);
    const f = await bash(failing.command, failing.env, "/");
    assert.equal(f.code, CLI_MISSING_EXIT_CODE);
    assert.equal(f.stdout, "", "install output goes to stderr");
    assert.match(f.stderr, /installing\n/);
    assert.ok(f.stderr.includes(`${CLI_MISSING_MARKER} installing`), f.stderr);

    const noop = sandboxLaunch(fake("no-such-cli-xyz", ["true"]), "p", opts);
    const n = await bash(noop.command, noop.env, "/");
    assert.equal(n.code, CLI_MISSING_EXIT_CODE);
    assert.ok(n.stderr.includes(`${CLI_MISSING_MARKER} no-such-cli-xyz is not on PATH`), n.stderr);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("shellWord quotes everything the shell would touch", () => {
  assert.equal(shellWord("plain/path-1.txt"), "plain/path-1.txt");
  assert.equal(shellWord("a b"), "'a b'");
  assert.equal(shellWord("it's $HOME"), `'it'\\''s $HOME'`);
  assert.equal(shellWord(""), "''");
});
