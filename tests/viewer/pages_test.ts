/**
 * The viewer without a browser: token data against the samples, token text, filters, the admin
 * token in front of `/ui`, refresh fragments.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { createGateway } from "../../gateway/mod.ts";
import { sampleTokens, TokenText } from "../../viewer/mod.ts";
import { sharedModel } from "../support/scripted_policy.ts";
import { startGateway, type TestGateway } from "../trajectory/agent_clients.ts";
import { driftRollout, sessionRollout } from "./rollouts.ts";

async function withGateway(fn: (t: TestGateway) => Promise<void>) {
  const t = await startGateway();
  try {
    await fn(t);
  } finally {
    await t.close();
  }
}

async function html(url: string, init: RequestInit = {}) {
  const res = await fetch(url, { redirect: "manual", ...init });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

Deno.test("token text: characters split over ids are shown once, and the text adds up", async () => {
  const model = await sharedModel();
  const text = new TokenText((ids) => model.decode(ids));
  const source = "naïve café 🙂 日本語 \u{1F9EA}\n\tdone";
  const ids = await model.tokenizer.encode(source);
  const { vocab, joins } = await text.describe(ids, 0, ids.length);
  const pieces = ids.map((id, i) => joins.get(i) ?? vocab.get(id)!);
  assert.equal(pieces.join(""), source);
  assert.ok(joins.size > 0, "the emoji are split over several ids in Qwen3");
  assert.ok(pieces.every((p) => !p.includes("\uFFFD")));
});

Deno.test("token data: each id's role is the sample's own loss and SFT mask", async () => {
  await withGateway(async (t) => {
    const text = new TokenText((ids) => t.model.decode(ids));
    for (const r of [await sessionRollout(t), await driftRollout(t)]) {
      const rollout = t.gw.rollouts.get(r.id)!;
      const tree = await t.tree(r.id);
      for (const s of await t.samples(r.id)) {
        const d = await sampleTokens(text, s, rollout, 0, s.input_ids.length);
        assert.deepEqual(d.ids, s.input_ids);
        assert.deepEqual([...d.kinds].map((k) => (k === "t" ? 1 : 0)), s.loss_mask);
        assert.deepEqual([...d.kinds].map((k) => (k === "s" ? 1 : 0)), s.sft_mask);
        const sampled = s.turns.reduce(
          (n, id) => n + tree.turns.find((x) => x.id === id)!.output_ids.length,
          0,
        );
        assert.equal([...d.kinds].filter((k) => k === "t" || k === "m").length, sampled);
        assert.equal(d.logprobs.length, sampled);
        assert.ok(!d.kinds.includes("x"));
        const shown = d.ids.map((id, i) => d.joins[i] ?? d.vocab[id]).join("");
        assert.equal(shown, await t.model.decode(Array.from(s.input_ids)));
      }
    }
  });
});

Deno.test("token data: drift is marked where it is, with both sides decoded", async () => {
  await withGateway(async (t) => {
    const text = new TokenText((ids) => t.model.decode(ids));
    const r = await driftRollout(t);
    const tree = await t.tree(r.id);
    const [s] = await t.samples(r.id);
    const t0 = tree.turns[0];
    const d = await sampleTokens(text, s, t.gw.rollouts.get(r.id)!, 0, 64);
    const drift = d.marks.find((m) => m.kind === "drift");
    assert.ok(drift && drift.kind === "drift");
    assert.equal(drift.at, t0.prompt_ids.length + t0.drift!.position);
    assert.equal(drift.sampled, await t.model.decode(t0.drift!.sampled));
    assert.equal(drift.rendered, await t.model.decode(t0.drift!.rendered));
    assert.ok(drift.sampled.startsWith("\n\n"));
    // Masked by the rollout's label policy: sampled, loss 0.
    const full = await sampleTokens(text, s, t.gw.rollouts.get(r.id)!, 0, s.input_ids.length);
    assert.equal(full.kinds[drift.at], "m");
  });
});

Deno.test("runs page: filters, sorting and the refresh fragment", async () => {
  await withGateway(async (t) => {
    const session = await sessionRollout(t);
    const drift = await driftRollout(t);
    const ids = (page: string) => [...page.matchAll(/data-rollout="([^"]+)"/g)].map((m) => m[1]);
    const page = await html(`${t.url}/ui`);
    assert.equal(page.status, 200);
    assert.deepEqual(ids(page.text), [drift.id, session.id], "newest first");
    assert.match(page.text, /data-refresh="\/ui\?fragment=1"/);
    assert.deepEqual(ids((await html(`${t.url}/ui?label=subagent`)).text), [session.id]);
    assert.deepEqual(ids((await html(`${t.url}/ui?task=drift-probe`)).text), [drift.id]);
    assert.deepEqual(ids((await html(`${t.url}/ui?sort=reward&dir=asc`)).text), [
      drift.id,
      session.id,
    ]);
    assert.deepEqual(ids((await html(`${t.url}/ui?q=probe-f`)).text), [session.id]);
    const limited = (await html(`${t.url}/ui?limit=1`)).text;
    assert.deepEqual(ids(limited), [drift.id]);
    assert.match(limited, /Showing the first 1; <a href="\?limit=2">show all/);
    const fragment = await html(`${t.url}/ui?fragment=1&task=drift-probe`);
    assert.ok(!fragment.text.includes("<html"), "a fragment is only the region");
    assert.deepEqual(ids(fragment.text), [drift.id]);
    assert.equal((await html(`${t.url}/ui/`)).headers.get("location"), "/ui");
    assert.equal((await html(`${t.url}/ui/rollouts/nope`)).status, 404);
    assert.equal((await html(`${t.url}/ui/rollouts/${session.id}/samples/9`)).status, 404);
    const rollout = await html(`${t.url}/ui/rollouts/${session.id}`);
    assert.ok(!rollout.text.includes('data-refresh="'), "a finished rollout does not refresh");
  });
});

Deno.test("with an admin token the viewer asks for it, once per browser session", async () => {
  const gw = createGateway({ model: await sharedModel(), adminToken: "s3cret" });
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, gw.app.fetch);
  const url = `http://127.0.0.1:${server.addr.port}`;
  try {
    const r = await gw.rollouts.create({});
    const page = `${url}/ui/rollouts/${r.id}`;
    const denied = await html(page);
    assert.equal(denied.status, 401);
    assert.match(denied.text, /name="token"/);
    assert.equal((await html(`${page}?token=wrong`)).status, 401);
    assert.equal((await html(page, { headers: { authorization: "Bearer s3cret" } })).status, 200);
    const signIn = await html(`${page}?token=s3cret&x=1`);
    assert.equal(signIn.status, 303);
    assert.equal(signIn.headers.get("location"), `/ui/rollouts/${r.id}?x=1`);
    const cookie = signIn.headers.get("set-cookie")!;
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Strict/);
    assert.ok(!cookie.includes("s3cret"), "the cookie holds a MAC, not the token");
    const session = cookie.split(";")[0];
    assert.equal((await html(page, { headers: { cookie: session } })).status, 200);
    assert.equal((await html(`${url}/ui`, { headers: { cookie: session } })).status, 200);
    assert.equal((await html(page, { headers: { cookie: "rollgate_ui=forged" } })).status, 401);
    // The trainer API still takes only the header.
    assert.equal((await html(`${url}/api/rollouts`, { headers: { cookie: session } })).status, 401);
  } finally {
    await server.shutdown();
  }
});

Deno.test("viewer pages carry a Content-Security-Policy that allows their own inline script and style only", async () => {
  await withGateway(async (t) => {
    const r = await driftRollout(t);
    for (const path of ["/ui", `/ui/rollouts/${r.id}`, "/ui/nowhere"]) {
      const page = await html(`${t.url}${path}`);
      const csp = page.headers.get("content-security-policy") ?? "";
      assert.match(csp, /default-src 'none'/, path);
      assert.match(csp, /frame-ancestors 'none'/, path);
      const hash = (text: string) =>
        `'sha256-${createHash("sha256").update(text).digest("base64")}'`;
      const scripts = [...page.text.matchAll(/<script>([^]*?)<\/script>/g)].map((m) => m[1]);
      const styles = [...page.text.matchAll(/<style>([^]*?)<\/style>/g)].map((m) => m[1]);
      assert.ok(scripts.length > 0 && styles.length > 0, `${path} has its inline script and style`);
      for (const s of scripts) assert.ok(csp.includes(`script-src ${hash(s)}`), `${path}: script`);
      for (const s of styles) assert.ok(csp.includes(`style-src ${hash(s)}`), `${path}: style`);
      assert.doesNotMatch(page.text, /\son[a-z]+=/, `${path}: no inline event handler`);
    }
  });
});
