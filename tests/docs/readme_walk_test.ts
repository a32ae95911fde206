/**
 * The README's walk, from the README's own text, pasted line by line into a shell (`bash -s` reads
 * its script a line at a time, as an interactive shell reads a paste) against a gateway started as
 * the README says (`npm start`, with a port, data directory and pid file of the test's own): every
 * `curl` answers 2xx, the agent gets the trainer's "Hello", the rollout's samples come back, and
 * the walk runs again on the same gateway and after a restart (the journal brings the earlier
 * rollouts back). Stopping it as the README says leaves nothing on the port: `kill $(cat pidfile)`,
 * then `kill` of the PID of `npm start` itself.
 */
import assert from "node:assert/strict";
import { freePort } from "../support/gateway_process.ts";
import { skipGroup } from "../support/skips.ts";
import { within } from "../support/within.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const README = Deno.readTextFileSync(ROOT + "README.md");

/** The shell blocks of the README section whose heading starts with `heading`, in order. */
function shellBlocks(heading: string): string {
  const start = README.indexOf(`\n## ${heading}`);
  assert.ok(start >= 0, `README has a section "${heading}"`);
  const end = README.indexOf("\n## ", start + 1);
  const section = README.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]).join("");
}

/** Whether anything accepts connections on `port`. */
async function listening(port: number): Promise<boolean> {
  try {
    (await Deno.connect({ hostname: "127.0.0.1", port })).close();
    return true;
  } catch {
    return false;
  }
}

function alive(pid: number): boolean {
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
}

/** `npm start -- <args>` from the repository root, its output collected. */
function npmStart(args: string[]) {
  const child = new Deno.Command("npm", {
    args: ["start", "--", ...args],
    cwd: ROOT,
    env: { npm_config_update_notifier: "false" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let log = "";
  const pump = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s.pipeThrough(new TextDecoderStream())) log += chunk;
  };
  const exited = Promise.all([child.status, pump(child.stdout), pump(child.stderr)])
    .then(([status]) => status);
  return { child, exited, output: () => log };
}

async function ready(url: string, output: () => string): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    try {
      const r = await fetch(`${url}/ready`, { signal: AbortSignal.timeout(5_000) });
      await r.body?.cancel();
      if (r.ok) return;
    } catch { /* not up yet */ }
    if (Date.now() > deadline) throw new Error(`npm start did not get ready:\n${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Runs `walk` in bash with `curl` wrapped to report each answer's status on stderr; the statuses
 * (one per curl the walk runs) and what the walk printed.
 */
async function runWalk(walk: string): Promise<{ statuses: number[]; stdout: string }> {
  // Each curl's stderr goes to a file first and out in one write: the walk's background curl and a
  // foreground one would otherwise interleave their status lines byte by byte.
  const shim = `curl() { local e rc; e=$(mktemp); command curl --max-time 60 ` +
    `-w '%{stderr}HTTP %{http_code}\\n' "$@" 2>"$e"; rc=$?; cat "$e" >&2; rm -f "$e"; return $rc; }\n`;
  const child = new Deno.Command("bash", {
    args: ["-s"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(shim + walk));
  await writer.close();
  const out = await within("the walk", 120_000, child.output());
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, `the walk exits 0:\n${stdout}\n${stderr}`);
  const statuses = [...stderr.matchAll(/^HTTP (\d+)$/gm)].map((m) => Number(m[1]));
  const other = stderr.split("\n").filter((l) => l && !/^HTTP \d+$/.test(l));
  assert.deepEqual(other, [], "the walk prints nothing else on stderr");
  return { statuses, stdout };
}

const tools = await new Deno.Command("bash", { args: ["-c", "command -v npm curl"] }).output();

Deno.test({
  name: "README walk: pasted into a shell against npm start, 2xx at every step, again and again",
  ignore: skipGroup("README walk", tools.success ? undefined : "npm or curl is not on PATH"),
}, async () => {
  const original = shellBlocks("The walk");
  // The one change to the README's text: the test's own port instead of 7860.
  assert.equal(original.split("127.0.0.1:7860").length, 2, "the walk names the gateway once");
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const walk = original.replace("127.0.0.1:7860", `127.0.0.1:${port}`);
  const curls = walk.match(/\bcurl /g)!.length;
  const dir = await Deno.makeTempDir({ prefix: "rollgate-walk-" });
  const pidFile = `${dir}/rollgate.pid`;
  const args = ["--port", String(port), "--data-dir", `${dir}/data`, "--pid-file", pidFile];
  const seen = new Set<string>();
  const walkOnce = async (label: string) => {
    const { statuses, stdout } = await runWalk(walk);
    assert.equal(statuses.length, curls, `${label}: every curl answered`);
    assert.deepEqual(statuses.filter((s) => s < 200 || s > 299), [], `${label}: 2xx:\n${stdout}`);
    assert.match(stdout, /"delta":\{[^}]*"content":"Hello"/, `${label}: the agent got Hello`);
    assert.match(stdout, /"completed":true/);
    const finished = /\{"id":"([^"]+)","reward":1,"samples":\[\{/.exec(stdout);
    assert.ok(finished, `${label}: the samples came back:\n${stdout}`);
    assert.match(stdout, /"loss_mask":\[/);
    assert.ok(!seen.has(finished[1]), `${label}: a new rollout`);
    seen.add(finished[1]);
  };
  let gateway = npmStart(args);
  try {
    await ready(url, gateway.output);
    await walkOnce("first walk");
    await walkOnce("second walk");

    // Stopped through the pid file: the gateway exits, npm with it, and the port is free.
    const pid = Number((await Deno.readTextFile(pidFile)).trim());
    Deno.kill(pid, "SIGTERM");
    const status = await within("npm start after kill $(cat pidfile)", 60_000, gateway.exited);
    assert.equal(status.code, 0, gateway.output());
    assert.equal(await listening(port), false, "nothing listens on the port");
    assert.equal(alive(pid), false, "the gateway process is gone");

    // Again after a restart: the journal restores the two rollouts and the walk still runs.
    gateway = npmStart(args);
    await ready(url, gateway.output);
    assert.match(gateway.output(), /restored 2 rollout\(s\)/);
    await walkOnce("walk after a restart");

    // Stopped through the PID of npm start itself: npm passes the signal to the gateway.
    const gatewayPid = Number((await Deno.readTextFile(pidFile)).trim());
    assert.notEqual(gatewayPid, gateway.child.pid);
    gateway.child.kill("SIGTERM");
    await within("npm start after kill of its PID", 60_000, gateway.exited);
    assert.equal(await listening(port), false, "nothing listens on the port");
    assert.equal(alive(gatewayPid), false, "the gateway process is gone");
  } finally {
    // A gateway that outlived npm holds npm's output pipes open: it goes first.
    const left = Number(await Deno.readTextFile(pidFile).catch(() => "0"));
    if (left && alive(left)) Deno.kill(left, "SIGKILL");
    try {
      gateway.child.kill("SIGKILL");
    } catch { /* already gone */ }
    await gateway.exited;
    await Deno.remove(dir, { recursive: true });
  }
});
