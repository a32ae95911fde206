/**
 * The rollout loop through the E2B adapter: the real `e2b` SDK against the E2B TEST DOUBLE, whose
 * sandboxes are local bubblewrap ones with this repository's agent CLIs bound in (as a template
 * with them baked in has them). The config files go in, and mini-swe-agent's trajectory comes out,
 * through the SDK's files API; the CLI runs through envd; the gateway is reached at `--public-url`.
 * `gold` earns 1 with the PyPI-distributed mini-swe-agent, whose outcome is a file.
 */
import assert from "node:assert/strict";
import { harness } from "../../harness/mod.ts";
import { SHIPPED_TASKS_DIR } from "../../sandbox/mod.ts";
import { FakeE2B } from "../sandbox/support/fake_e2b.ts";
import { skipGroup } from "../support/skips.ts";
import { assertWellFormed, describe, runQuiet, skipReason } from "./support.ts";

const KEY = "e2b_test_key";

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

const name = "mini-swe-agent";
const skip = skipReason(harness(name));

Deno.test({
  name: `runner ${name} in e2b (fake E2B, real SDK): gold earns 1${
    skip ? ` [skipped: ${skip}]` : ""
  }`,
  ignore: skipGroup(`runner e2b (${name})`, skip),
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-runner-e2b-" });
  const fake = new FakeE2B(KEY, dir, { agents: true });
  const port = freePort();
  try {
    const { records } = await runQuiet({
      tasks: `${SHIPPED_TASKS_DIR}/py-lru`,
      harness: name,
      policy: "gold",
      out: `${dir}/results.jsonl`,
      sandbox: "e2b",
      sandboxOptions: {
        e2b: { apiKey: KEY, apiUrl: fake.url, sandboxUrl: fake.url, user: "root" },
      },
      image: "rollgate-swe",
      gatewayPort: port,
      publicUrl: `http://127.0.0.1:${port}`,
    });
    assert.equal(records.length, 1);
    const [r] = records;
    assertWellFormed(r, name);
    assert.equal(r.sandbox, "e2b");
    assert.equal(r.reward, 1, describe(r));
    assert.equal(r.turns, 2);
    const files = fake.requests.filter((q) => q.path.startsWith("/files"));
    assert.ok(files.some((q) => q.method === "POST"), "config files written through the SDK");
    assert.ok(
      files.some((q) => q.method === "GET" && q.path.includes("trajectory.json")),
      "the trajectory read back through the SDK",
    );
  } finally {
    await fake.close();
    await Deno.remove(dir, { recursive: true });
  }
});
