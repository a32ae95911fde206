/**
 * The viewer in real headless Chromium: the runs page following a live rollout, a rollout with a
 * sub-agent and a compaction, the token view read back against the samples' loss masks, the
 * exported file opened offline, the plots page (its drawn points read back against the rollouts),
 * and `main.ts view` over a saved tree and a runner results file.
 * Screenshots go to `ROLLGATE_SCREENSHOT_DIR` (see `tests/support/chromium.ts`).
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Locator, Page } from "playwright-core";
import type { Sample } from "../../trajectory/mod.ts";
import { SHIPPED_TASKS_DIR } from "../../sandbox/mod.ts";
import { CHROMIUM_MISSING, launchChromium } from "../support/chromium.ts";
import { skipGroup } from "../support/skips.ts";
import { answerText } from "../support/scripted_policy.ts";
import { runQuiet, skipReason } from "../runner/support.ts";
import { HARNESSES } from "../../harness/mod.ts";
import { CAT_OUTPUT, SUB_PROMPT, SUB_REPORT } from "../trajectory/claude_code_session.ts";
import { chatTurn, fixtures, startGateway, type TestGateway } from "../trajectory/agent_clients.ts";
import { driftRollout, sessionRollout } from "./rollouts.ts";
import { type PlayedRollout, playGroups } from "./grpo_rollouts.ts";
import { InMemoryBackendTestDouble } from "../support/in_memory_backend.ts";
import { byteSize } from "../../cli/view.ts";

const DENO = new URL("../../node_modules/.bin/deno", import.meta.url).pathname;
const ROOT = new URL("../../", import.meta.url).pathname;

async function withBrowser(
  fn: (t: TestGateway, b: Awaited<ReturnType<typeof launchChromium>>) => Promise<void>,
): Promise<void> {
  const t = await startGateway();
  const b = await launchChromium();
  try {
    await fn(t, b);
    assert.deepEqual(b.errors, [], "the pages' scripts ran without errors");
  } finally {
    await b.close();
    await t.close();
  }
}

const SKIP = skipGroup("viewer browser tests", CHROMIUM_MISSING);
const browserTest = (name: string, fn: () => Promise<void>, ignore = SKIP) =>
  Deno.test({ name: `browser: ${name}`, ignore, fn });

type Token = [position: number, role: string, text: string];

/** Every token span under `scope`: position, role class, text. */
function tokensIn(scope: Page | Locator): Promise<Token[]> {
  return scope.locator(".tok span[data-i]").evaluateAll((els) =>
    els.map((e): Token => [
      Number(e.getAttribute("data-i")),
      e.className.split(" ")[0],
      e.textContent ?? "",
    ])
  );
}

/** Pages through a token view with its "next" button, collecting every token. */
async function readAllTokens(page: Page, served: boolean): Promise<Token[]> {
  const all: Token[] = [];
  for (let pages = 0; pages < 200; pages++) {
    await page.waitForSelector(".tok span[data-i]");
    all.push(...await tokensIn(page));
    const next = page.locator(".pager button", { hasText: "next ›" }).first();
    if (await next.isDisabled()) return all;
    if (served) await Promise.all([page.waitForNavigation(), next.click()]);
    else await next.click();
  }
  throw new Error("more than 200 pages");
}

/** The read-back tokens are the sample: every position once, loss mask and text equal. */
async function assertTokensAre(t: TestGateway, tokens: Token[], s: Sample) {
  assert.deepEqual(tokens.map(([i]) => i), s.input_ids.map((_, i) => i), "every id once, in order");
  assert.deepEqual(tokens.map(([, k]) => (k === "k-t" ? 1 : 0)), s.loss_mask);
  assert.deepEqual(tokens.map(([, k]) => (k === "k-s" ? 1 : 0)), s.sft_mask);
  assert.equal(
    tokens.map(([, , text]) => text).join(""),
    await t.model.decode(Array.from(s.input_ids)),
  );
}

browserTest(
  "the runs page follows a live rollout without reloading",
  () =>
    withBrowser(async (t, b) => {
      await b.page.goto(`${t.url}/ui`);
      await b.page.waitForSelector("text=No rollouts match.");
      await b.page.evaluate(() => (globalThis as Record<string, unknown>).sameDocument = true);
      const r = await t.rollout({ metadata: { task: "live-probe", harness: "pi" } });
      const row = `tr[data-rollout="${r.id}"]`;
      await b.page.waitForSelector(row);
      assert.match(await b.page.textContent(`${row} td[data-col=turns]`) ?? "", /^0\/0/);
      await b.screenshot("runs-live-0-created");

      const body = fixtures.pi()[0].body;
      t.replies.push(answerText("Say hello.", "Hello."));
      await chatTurn(t, r, body);
      await b.page.locator(`${row} td[data-col=turns]`, { hasText: /^1\/1/ }).waitFor();
      assert.match(await b.page.textContent(`${row} .badge`) ?? "", /active/);
      await b.screenshot("runs-live-1-turn");

      await t.finish(r.id, 1);
      await b.page.locator(`${row} .badge`, { hasText: /^finished$/ }).waitFor();
      assert.equal((await b.page.textContent(`${row} td[data-col=reward]`))?.trim(), "1");
      assert.equal(
        await b.page.evaluate(() => (globalThis as Record<string, unknown>).sameDocument),
        true,
        "updated in place, not reloaded",
      );
      assert.match(await b.page.textContent("[data-updated]") ?? "", /^updated /);
      await b.screenshot("runs-live-2-finished");
    }),
);

browserTest("a rollout with a sub-agent and a compaction", () =>
  withBrowser(async (t, b) => {
    const r = await sessionRollout(t);
    await b.page.goto(`${t.url}/ui/rollouts/${r.id}`);
    const main = b.page.locator("ul.chains > li.chain[data-label=main]");
    await main.waitFor();
    const sub = main.locator("li.chain[data-label=subagent]");
    const compaction = main.locator("li.chain[data-label=compaction]");
    assert.equal(await sub.count(), 1, "the sub-agent hangs off the main chain");
    assert.equal(await compaction.count(), 1, "the compaction hangs off the chain it replaced");
    assert.equal(await b.page.locator("ul.chains > li.chain[data-label=side]").count(), 1);
    const subText = await sub.textContent() ?? "";
    assert.match(subText, /spawned by chain 0/);
    assert.match(subText, /tool_name: Agent/);
    assert.match(subText, /closed_by_turn: /);
    assert.match(await compaction.textContent() ?? "", /replaces chain 0.*replaced_chain: 0/s);
    assert.equal(await b.page.locator("table.samples tr[data-sample]").count(), 3);
    await b.screenshot("rollout-subagent-compaction", { fullPage: true });

    // The sub-agent's first turn, in Claude Code's terms.
    await Promise.all([b.page.waitForNavigation(), sub.locator("a", { hasText: "#1" }).click()]);
    assert.match(await b.page.textContent("h1") ?? "", /Turn #1/);
    const roles = await b.page.$$eval(".msg .role", (els) => els.map((e) => e.textContent));
    assert.deepEqual(roles.slice(0, 2), ["system", "user · text"]);
    assert.ok(roles.some((x) => x?.startsWith("assistant · tool_use Bash")));
    assert.match(await b.page.textContent("main") ?? "", new RegExp(SUB_PROMPT));

    // The main agent gets the report as the Agent tool's result, shown in full.
    await b.page.goto(`${t.url}/ui/rollouts/${r.id}/turns/3`);
    const result = b.page.locator(".msg.tool", { hasText: "user · tool_result (Agent)" });
    assert.match(await result.textContent() ?? "", new RegExp(SUB_REPORT.replace("\n", "\\n")));
    await b.page.goto(`${t.url}/ui/rollouts/${r.id}/turns/4`);
    assert.match(
      await b.page.locator(".msg.tool").last().textContent() ?? "",
      new RegExp(CAT_OUTPUT),
    );
    await b.screenshot("turn-main-after-subagent", { fullPage: true });
  }));

browserTest(
  "the token view's trained ids are exactly the samples' loss masks",
  () =>
    withBrowser(async (t, b) => {
      const rollouts = [await sessionRollout(t), await driftRollout(t)];
      for (const r of rollouts) {
        for (const s of await t.samples(r.id)) {
          // Pages of 8,192 ids: the longest sample spans three.
          await b.page.goto(`${t.url}/ui/rollouts/${r.id}/samples/${s.index}?size=8192`);
          await assertTokensAre(t, await readAllTokens(b.page, true), s);
        }
      }
      // The drifting rollout: drift outlined at its position, both sides named, tooltips.
      const drift = rollouts[1];
      const tree = await t.tree(drift.id);
      const [s] = await t.samples(drift.id);
      const t0 = tree.turns[0], t1 = tree.turns[1];
      const at = t0.prompt_ids.length + t0.drift!.position;
      const from = Math.max(0, t0.prompt_ids.length - 120);
      await b.page.goto(`${t.url}/ui/rollouts/${drift.id}/samples/0?from=${from}`);
      assert.equal(await b.page.getAttribute(".tok span.drift", "data-i"), String(at));
      assert.match(
        await b.page.textContent(".drifts") ?? "",
        /drift.*turn #0.*sampled "\\n\\n.*the template renders "\\n/s,
      );
      const firstTrained = s.loss_mask.indexOf(1, t1.prompt_ids.length);
      await b.page.hover(`.tok span[data-i="${firstTrained}"]`);
      const tip = await b.page.textContent("#tip") ?? "";
      assert.match(tip, new RegExp(`^#${firstTrained}  id ${s.input_ids[firstTrained]} `));
      assert.match(tip, /sampled, trained \(loss 1\)\nlogprob -?\d/);
      await b.page.hover(`.tok span[data-i="${at}"]`);
      assert.match(await b.page.textContent("#tip") ?? "", /sampled, loss 0/);
      await b.screenshot("tokens-drift-masked-trained");
      // The README's picture: every role on one screen.
      await b.page.goto(
        `${t.url}/ui/rollouts/${drift.id}/samples/0?from=${t0.prompt_ids.length - 40}&size=220`,
      );
      await b.page.mouse.move(0, 0);
      await b.screenshot("readme-token-view", { fullPage: true });
    }),
);

browserTest(
  "the exported file opens offline and pages through every id",
  () =>
    withBrowser(async (t, b) => {
      const r = await sessionRollout(t);
      const res = await fetch(`${t.url}/ui/rollouts/${r.id}/export.html`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-disposition") ?? "", /attachment; filename="rollgate-/);
      const file = await Deno.makeTempFile({ prefix: "rollgate-export-", suffix: ".html" });
      try {
        await Deno.writeTextFile(file, await res.text());
        const page = await b.context.newPage();
        await b.context.setOffline(true);
        const requests: string[] = [];
        page.on("request", (req) => requests.push(req.url()));
        const url = `file://${file}`;
        await page.goto(url);
        await page.waitForSelector("#sample-0 .tok span[data-i]");
        assert.deepEqual(requests, [url], "the file loads nothing else");

        const samples = await t.samples(r.id);
        assert.equal(await page.locator("section.tokens").count(), samples.length);
        // Sample 1 (main) pages locally; its turns' links jump without leaving the file.
        const main = samples.find((s) => s.branch === "main")!;
        const section = page.locator(`#sample-${main.index}`);
        const tokens: Token[] = [];
        for (let pages = 0; pages < 50; pages++) {
          tokens.push(...await tokensIn(section));
          const next = section.locator(".pager button", { hasText: "next ›" });
          if (await next.isDisabled()) break;
          await next.click();
        }
        await assertTokensAre(t, tokens, main);
        await page.locator(`a[href="#turn-3"]`).first().click();
        // The page's hashchange handler opens the turn after the click returns (a race under load).
        await page.waitForSelector("#turn-3[open]", { timeout: 15_000 });
        assert.equal(await page.locator("#turn-3").getAttribute("open"), "");
        assert.equal(page.url(), `${url}#turn-3`);
        assert.deepEqual(requests, [url]);
        await b.screenshot("export-offline", { page });
      } finally {
        await Deno.remove(file);
      }
    }),
);

browserTest(
  "main.ts view serves a saved tree and a runner's results (tests, diff)",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "rollgate-view-" });
    try {
      const run = await runQuiet({
        tasks: `${SHIPPED_TASKS_DIR}/py-slug`,
        harness: "pi",
        policy: "gold",
        out: `${dir}/results.jsonl`,
      });
      const [record] = run.file;
      assert.equal(record.reward, 1, run.log);
      await withBrowser(async (t, b) => {
        const r = await sessionRollout(t);
        await Deno.writeTextFile(`${dir}/tree.json`, JSON.stringify(await t.tree(r.id)));
        const child = new Deno.Command(DENO, {
          args: ["run", "-A", "main.ts", "view", `${dir}/tree.json`, `${dir}/results.jsonl`],
          cwd: ROOT,
          stdout: "piped",
          stderr: "inherit",
        }).spawn();
        try {
          const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
          let out = "";
          while (!out.includes("\n")) {
            const { value, done } = await reader.read();
            if (done) throw new Error(`main.ts view ended: ${out}`);
            out += value;
          }
          reader.releaseLock();
          const url = /(http:\/\/\S+\/ui) \(2 rollouts\)/.exec(out)?.[1];
          assert.ok(url, out);
          await b.page.goto(url);
          const row = `tr[data-rollout="${record.rollout_id}"]`;
          assert.match(await b.page.textContent(`${row}`) ?? "", /py-slug.*recorded/s);
          const tests = `${record.tests.filter((x) => x.passed).length}/${record.tests.length}`;
          assert.equal((await b.page.textContent(`${row} .badge.pass`))?.trim(), tests);
          assert.equal(await b.page.locator(`tr[data-rollout="${r.id}"]`).count(), 1);
          assert.equal(
            await b.page.locator("[data-refresh]").count(),
            0,
            "saved files do not change",
          );
          // Turns and tokens of a results record come from its samples' turns.
          const spans = new Map<string, { start: number; end: number }>();
          for (const s of record.samples as Sample[]) {
            for (const x of s.turn_spans) spans.set(x.turn, x);
          }
          const ids = [...spans.values()].reduce((n, x) => n + x.end - x.start, 0);
          assert.ok(record.turns >= 2 && ids > 0);
          assert.equal(
            (await b.page.textContent(`${row} td[data-col=turns]`))?.trim(),
            `${record.turns}/${record.turns}`,
          );
          assert.equal(
            (await b.page.textContent(`${row} td[data-col=tokens]`))?.trim(),
            ids.toLocaleString("en-US"),
          );

          await Promise.all([b.page.waitForNavigation(), b.page.click(`${row} a`)]);
          assert.equal(
            await b.page.locator("table.tests tr[data-test] .badge.pass").count(),
            record.tests.length,
          );
          assert.ok(await b.page.locator(".diff .add").count() > 0, "the diff's added lines");
          assert.match(await b.page.textContent(".diff") ?? "", /diff --git/);
          assert.ok(await b.page.locator("table.samples tr[data-sample]").count() >= 1);
          await b.screenshot("view-results", { fullPage: true });
          // The results file holds samples but no turns: roles come from the masks alone.
          await Promise.all([b.page.waitForNavigation(), b.page.click("table.samples a")]);
          assert.match(
            await b.page.textContent("main") ?? "",
            /turns of this sample are not known/,
          );
          await assertTokensAre(t, await readAllTokens(b.page, true), record.samples[0] as Sample);

          await b.page.goto(`${url}/rollouts/${r.id}`);
          assert.match(
            await b.page.textContent("main") ?? "",
            /rebuilt from the tree with the default label policy/,
          );
          assert.equal(await b.page.locator("li.chain[data-label=compaction]").count(), 1);

          // The plots over the saved files: the record's reward, its turns, its turns' lengths.
          await b.page.goto(`${url}/plots`);
          const rewardPoints = await marksOf(b.page, "reward-time", "circle.pt");
          // The record's reward and the tree's, both 1 (in one span or two).
          assert.deepEqual(new Set(rewardPoints.map((p) => Number(p.data.y))), new Set([1]));
          assert.equal(rewardPoints.reduce((n, p) => n + Number(p.data.n), 0), 2);
          const lengths = await marksOf(b.page, "prompt-lengths", "rect.bar");
          const prompts = [
            ...(record.samples as Sample[]).flatMap((s) => s.turn_spans)
              .reduce((m, x) => m.set(x.turn, x.output_start), new Map<string, number>()).values(),
            ...(await t.tree(r.id)).turns.map((x) => x.prompt_ids.length),
          ];
          assertHistogram(lengths, prompts, "prompt lengths of both rollouts");
          const turnsPlot = await marksOf(b.page, "turns-per-rollout", "rect.bar");
          assertHistogram(
            turnsPlot,
            [record.turns, (await t.tree(r.id)).turns.length],
            "turns per rollout",
          );
          await b.screenshot("view-results-plots", { fullPage: true });
        } finally {
          child.kill();
          await child.status;
          await child.stdout.cancel().catch(() => {});
        }
      });
      // An export of a small rollout says its size as it is (not "0.0 MB").
      const out = `${dir}/export.html`;
      const exported = await new Deno.Command(DENO, {
        args: ["run", "-A", "main.ts", "view", `${dir}/results.jsonl`, "--export", out],
        cwd: ROOT,
        stdout: "piped",
        stderr: "piped",
      }).output();
      const said = new TextDecoder().decode(exported.stdout);
      assert.equal(exported.code, 0, said + new TextDecoder().decode(exported.stderr));
      const size = (await Deno.stat(out)).size;
      assert.ok(size < 1e6, "a one-rollout export is small");
      assert.equal(said.trim(), `rollgate view: wrote ${out} (${byteSize(size)})`);
      assert.match(said, /\(\d+\.\d KB\)/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
  SKIP || skipGroup("viewer over a runner's results", skipReason(HARNESSES.pi)),
);

/** One drawn mark: the values it carries (`data-*`) and where it is drawn. */
interface Mark {
  data: Record<string, string>;
  x: number;
  y: number;
  height: number;
}

/** The marks matching `selector` in the plot `name`. */
function marksOf(page: Page, name: string, selector: string): Promise<Mark[]> {
  return page.locator(`svg[data-plot="${name}"] ${selector}`).evaluateAll((els) =>
    els.map((e) => {
      const num = (a: string) => Number(e.getAttribute(a) ?? NaN);
      const data: Record<string, string> = {};
      for (const a of e.getAttributeNames()) {
        if (a.startsWith("data-")) data[a.slice(5)] = e.getAttribute(a)!;
      }
      return {
        data,
        x: e.tagName === "circle" ? num("cx") : num("x"),
        y: e.tagName === "circle" ? num("cy") : num("y"),
        height: num("height"),
      };
    })
  );
}

/** The drawn positions are one linear map of the values (increasing, or decreasing for y). */
function assertLinear(pairs: [value: number, pixel: number][], increasing: boolean, what: string) {
  const sorted = [...pairs].sort((a, b) => a[0] - b[0]);
  const [v0, p0] = sorted[0], [v1, p1] = sorted.at(-1)!;
  if (v1 === v0) {
    assert.ok(pairs.every(([, p]) => Math.abs(p - p0) < 0.6), `${what}: one value, one place`);
    return;
  }
  assert.ok(increasing ? p1 > p0 : p1 < p0, `${what}: drawn the right way up`);
  for (const [v, p] of pairs) {
    const expected = p0 + ((v - v0) / (v1 - v0)) * (p1 - p0);
    assert.ok(Math.abs(p - expected) < 0.6, `${what}: ${v} drawn at ${p}, not ${expected}`);
  }
}

/** Each bar counts exactly the values in its span; heights are proportional to the counts. */
function assertHistogram(bars: Mark[], values: number[], what: string) {
  assert.ok(bars.length > 0, `${what}: drawn`);
  for (const b of bars) {
    const from = Number(b.data.from), to = Number(b.data.to);
    const inside = values.filter((v) => v >= from && v < to).length;
    assert.equal(Number(b.data.n), inside, `${what}: [${from}, ${to})`);
  }
  assert.equal(bars.reduce((n, b) => n + Number(b.data.n), 0), values.length, `${what}: all`);
  const tall = bars.filter((b) => Number(b.data.n) > 0);
  const perCount = tall[0].height / Number(tall[0].data.n);
  for (const b of tall) {
    assert.ok(Math.abs(b.height - perCount * Number(b.data.n)) < 0.6, `${what}: bar height`);
  }
}

browserTest(
  "the plots page draws a GRPO run: rewards, versions, groups, lengths, failures",
  async () => {
    const backend = new InMemoryBackendTestDouble();
    const t = await startGateway({ backend });
    const b = await launchChromium();
    try {
      const start = Date.UTC(2026, 0, 5, 9, 0);
      const played = await playGroups(t.gw, backend, {
        groups: 5,
        perGroup: 4,
        startMs: start,
        stepMs: 60_000,
        failEvery: 7,
      });
      await b.page.goto(`${t.url}/ui`);
      await Promise.all([
        b.page.waitForNavigation(),
        b.page.click("header.top a[href='/ui/plots']"),
      ]);
      const page = b.page;
      assert.match(
        await page.textContent("[data-stats]") ?? "",
        /^20 rollouts · 20 with a reward \(mean 0\.5\) · 2 with an error · 5 groups, 2 of them flat/,
      );

      // Reward over time: 20 rollouts a minute apart in 20 spans, one each, in time order.
      const inTime = [...played].sort((a, b) => a.at - b.at);
      const points = (await marksOf(page, "reward-time", "circle.pt"))
        .sort((a, b) => Number(a.data.x) - Number(b.data.x));
      assert.deepEqual(points.map((p) => Number(p.data.y)), inTime.map((p) => p.reward));
      assert.deepEqual(points.map((p) => p.data.n), inTime.map(() => "1"));
      points.forEach((p, i) => {
        const at = inTime[i].at;
        assert.ok(
          Math.abs(Number(p.data.x) - at) <= 60_000,
          "each point within its rollout's span",
        );
      });
      assertLinear(points.map((p) => [Number(p.data.y), p.y]), false, "reward-time y");
      assertLinear(points.map((p) => [Number(p.data.x), p.x]), true, "reward-time x");

      // Failures over time: the rollouts whose last turn failed, in the spans they ended in.
      const spans = await marksOf(page, "failures-time", "g[data-failed]");
      assert.equal(spans.reduce((n, s) => n + Number(s.data.n), 0), 20);
      assert.deepEqual(
        spans.filter((s) => s.data.failed !== "0").map((s) => Number(s.data.from)).sort(),
        played.filter((p) => p.failed).map((p) =>
          Number(
            spans.find((s) => Number(s.data.from) <= p.at && p.at <= Number(s.data.to))!.data.from,
          )
        ).sort(),
      );

      // Reward by weight version: one version per group here, so its mean is the group's.
      const byVersion = new Map<string, number[]>();
      for (const p of played) {
        byVersion.set(String(p.version), [
          ...byVersion.get(String(p.version)) ?? [],
          p.reward,
        ]);
      }
      const versions = await marksOf(page, "reward-version", "circle.pt");
      assert.deepEqual(
        versions.map((v) => [v.data.version, Number(v.data.y), Number(v.data.n)]),
        [...byVersion].map(([v, rs]) => [v, rs.reduce((a, b) => a + b, 0) / rs.length, rs.length]),
      );
      assertLinear(versions.map((v) => [Number(v.data.y), v.y]), false, "reward-version y");

      // Groups: every member's reward, and its advantage computed here independently.
      const advantage = new Map<string, number>();
      const groups = new Map<string, PlayedRollout[]>();
      for (const p of played) groups.set(p.group, [...groups.get(p.group) ?? [], p]);
      for (const members of groups.values()) {
        const mean = members.reduce((s, m) => s + m.reward, 0) / members.length;
        const std = Math.sqrt(
          members.reduce((s, m) => s + (m.reward - mean) ** 2, 0) / members.length,
        );
        for (const m of members) advantage.set(m.id, (m.reward - mean) / (std + 1e-6));
      }
      const rewards = await marksOf(page, "group-rewards", "circle.pt");
      const advantages = await marksOf(page, "group-advantages", "circle.pt");
      assert.equal(rewards.length, 20);
      for (const m of rewards) {
        const p = played.find((x) => x.id === m.data.rollout)!;
        assert.equal(m.data.group, p.group);
        assert.equal(Number(m.data.y), p.reward);
      }
      for (const m of advantages) {
        assert.ok(
          Math.abs(Number(m.data.y) - advantage.get(m.data.rollout)!) < 1e-9,
          m.data.rollout,
        );
      }
      assert.deepEqual(new Set(advantages.map((m) => m.data.rollout)), new Set(advantage.keys()));
      assertLinear(advantages.map((m) => [Number(m.data.y), m.y]), false, "advantage y");
      assert.match(
        await page.textContent("table.groups tr[data-group=task-002]") ?? "",
        /task-002\s*4\s*0\s*0\.5\s*0\.5\s*0 0 1 1/,
      );

      // Lengths per turn and turns per rollout, from the store's own turns.
      const turns = t.gw.rollouts.list().flatMap((r) => r.turns.filter((x) => x.status === "done"));
      assertHistogram(
        await marksOf(page, "prompt-lengths", "rect.bar"),
        turns.map((x) => x.promptLength),
        "prompt lengths",
      );
      assertHistogram(
        await marksOf(page, "sampled-lengths", "rect.bar"),
        turns.map((x) => x.outputIds.length),
        "sampled lengths",
      );
      assertHistogram(
        await marksOf(page, "turns-per-rollout", "rect.bar"),
        played.map((p) => p.turns),
        "turns per rollout",
      );
      await b.screenshot("plots-grpo-run", { fullPage: true });

      // Live: a new rollout shows up without a reload.
      await page.evaluate(() => (globalThis as Record<string, unknown>).sameDocument = true);
      const r = await t.rollout({ id: "late", group: "task-late" });
      await t.finish(r.id, 1);
      await page.locator("[data-stats]", { hasText: /^21 rollouts · 21 with a reward/ }).waitFor();
      assert.equal(
        await page.evaluate(() => (globalThis as Record<string, unknown>).sameDocument),
        true,
      );
      assert.deepEqual(b.errors, [], "the page's script ran without errors");
    } finally {
      await b.close();
      await t.close();
    }
  },
);
