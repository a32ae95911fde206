/**
 * The command line as a user meets it, over real processes and sockets: every verb's `--help`,
 * `serve --help` listing every flag `serve` parses, and every mistake in a flag reported in one
 * line before the port is bound (the port is held by the test, so a gateway that tried to bind
 * first would say "in use" instead); then what `serve` says once it runs: a warning for a local
 * black-box upstream without its key, and `--pid-file`.
 */
import assert from "node:assert/strict";
import { SERVE_FLAGS } from "../../cli/serve_flags.ts";
import { USAGE } from "../../cli/usage.ts";
import { DENO, startGateway } from "../support/gateway_process.ts";
import { within } from "../support/within.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

async function run(args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(DENO, {
    args: ["run", "-A", ROOT + "main.ts", ...args],
    cwd: ROOT,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("cli: every verb's --help prints its usage and exits 0", async () => {
  for (const verb of ["serve", "inspect", "audit", "view", "rollout", "help"]) {
    const out = await run([verb, "--help"]);
    assert.equal(out.code, 0, `${verb} --help: ${out.stderr}`);
    const name = verb === "help" ? "serve" : verb;
    assert.match(out.stdout, new RegExp(`^usage: main\\.ts ${name} `), `${verb} --help`);
  }
  const none = await run(["--help"]);
  assert.equal(none.code, 0);
  assert.equal(none.stdout.trim(), USAGE.trim());
});

Deno.test("cli: serve --help names every flag serve takes", () => {
  const missing = Object.keys(SERVE_FLAGS).filter((flag) =>
    flag !== "help" && !new RegExp(`--${flag}\\b`).test(USAGE)
  );
  assert.deepEqual(missing, [], "flags of SERVE_FLAGS that usage.ts does not list");
  for (const flag of ["--database-url", "--advertise-url", "--owner-lease", "--pid-file"]) {
    assert.match(USAGE, new RegExp(`^  ${flag} `, "m"));
  }
});

Deno.test("cli: a bad flag is one line, before the port is bound and before 'listening'", async () => {
  const held = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = String((held.addr as Deno.NetAddr).port);
  try {
    const cases: [string[], RegExp][] = [
      [["--model-family", "qwen9"], /^rollgate: unknown model family qwen9; known: .*qwen3\b/],
      [["--tool-parser", "hermes"], /--tool-parser is for the generic family; qwen3 reads its/],
      [["--model-family", "generic", "--tool-parser", "x"], /unknown tool parser x; known: hermes/],
      [["--model-dir", "/nonexistent"], /model directory \/nonexistent must hold tokenizer\.json/],
      [
        ["--bogus"],
        /^rollgate: Unknown option '--bogus' \(main\.ts serve --help lists the flags\)$/,
      ],
      [["--backend", "nope"], /--backend must be one of gate, vllm, sglang, anthropic, openai/],
      [["--upstream-openai-url", "http://127.0.0.1:9"], /has no path: .*expected e\.g\. .*\/v1/],
      [["--upstream-anthropic-url", "http://127.0.0.1:9/v1"], /ends in \/v1: the Anthropic SDK/],
      // A hosted API without its key cannot work: an error that names the variable.
      [
        ["--upstream-openai-url", "https://api.openai.com/v1"],
        /^rollgate: OPENAI_API_KEY is not set/,
      ],
      [["--drain-grace=-1"], /--drain-grace must be an integer ≥ 0, got -1/],
      [["--drain-grace", "-1"], /argument is ambiguous\. Did you forget/],
    ];
    for (const [args, message] of cases) {
      const out = await run(["serve", "--no-journal", "--port", port, ...args]);
      assert.equal(out.code, 1, args.join(" "));
      assert.equal(out.stdout, "", `${args.join(" ")}: nothing printed before the error`);
      assert.equal(out.stderr.trim().split("\n").length, 1, out.stderr);
      assert.match(out.stderr.trim(), message);
    }
    const inUse = await run(["serve", "--no-journal", "--port", port]);
    assert.equal(inUse.code, 1);
    assert.match(inUse.stderr, new RegExp(`127\\.0\\.0\\.1:${port} is in use \\(another rollgate`));
    const outOfRange = await run(["serve", "--no-journal", "--port", "99999"]);
    assert.match(
      outOfRange.stderr,
      /^rollgate: --port must be a port number \(0-65535\), got 99999/,
    );
  } finally {
    held.close();
  }
});

Deno.test("cli: serve warns, naming the variable, when a local black-box upstream has no key", async () => {
  const url = "http://127.0.0.1:9/v1";
  const without = await startGateway(["--no-journal", "--upstream-openai-url", url], {
    OPENAI_API_KEY: "",
  });
  const withKey = await startGateway(["--no-journal", "--upstream-openai-url", url], {
    OPENAI_API_KEY: "sk-test",
  });
  try {
    assert.match(
      without.output(),
      /rollgate: warning: OPENAI_API_KEY is not set; the local openai upstream at http:\/\/127\.0\.0\.1:9 gets the placeholder key "missing"/,
    );
    assert.doesNotMatch(withKey.output(), /warning/);
  } finally {
    await without.stop();
    await withKey.stop();
  }
});

Deno.test("cli: --pid-file holds the gateway's pid; kill $(cat FILE) stops it and removes it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-pid-" });
  const pidFile = `${dir}/rollgate.pid`;
  const gw = await startGateway(["--no-journal", "--pid-file", pidFile]);
  try {
    const pid = Number((await Deno.readTextFile(pidFile)).trim());
    assert.equal(pid, gw.pid);
    Deno.kill(pid, "SIGTERM");
    const status = await within("the gateway exits after SIGTERM", 30_000, gw.exited);
    assert.equal(status.code, 0);
    await assert.rejects(Deno.stat(pidFile), Deno.errors.NotFound);
    await assert.rejects(fetch(`${gw.url}/health`), TypeError, "nothing answers on the port");
  } finally {
    await gw.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
