/**
 * A rollout: its summary, the runner's result (tests, diff), its chains as a tree with each
 * label's evidence and every turn (retries, drift, errors marked), and its samples.
 *
 * @module
 */
import type { FC } from "hono/jsx";
import type { Chain, Rollout, Sample, Turn } from "../../trajectory/mod.ts";
import type { RunResult, ViewedRollout } from "../source.ts";
import { sampleLayout } from "../token_data.ts";
import { runRow } from "../run_rows.ts";
import { count, duration, Evidence, Layout, type Links, reward, time } from "./layout.tsx";

/** Where each turn sits in the samples: the sample that trains it first, then the others. */
export function turnPlaces(
  samples: readonly Sample[],
  rollout: Rollout,
): Map<string, { sample: number; from: number; trained: boolean }[]> {
  const places = new Map<string, { sample: number; from: number; trained: boolean }[]>();
  for (const s of samples) {
    for (const seg of sampleLayout(s, rollout).segments ?? []) {
      let trained = false;
      for (let i = seg.output; i < seg.end && !trained; i++) trained = s.loss_mask[i] === 1;
      const list = places.get(seg.turn.id) ?? [];
      list.push({ sample: s.index, from: seg.start, trained });
      places.set(seg.turn.id, list.sort((a, b) => Number(b.trained) - Number(a.trained)));
    }
  }
  return places;
}

const TurnRow: FC<
  { t: Turn; id: string; links: Links; place?: { sample: number; from: number } }
> = ({ t, id, links, place }) => (
  <tr data-turn={t.index}>
    <td>
      <a href={links.turn(id, t.index)}>{`#${t.index}`}</a>
    </td>
    <td>{t.mount}</td>
    <td>
      <span class={`badge ${t.status}`}>{t.status}</span>
    </td>
    <td class="num">{count(t.promptLength)}</td>
    <td class="num">{count(t.bridgeIds.length + t.deltaIds.length)}</td>
    <td class="num">{count(t.outputIds.length)}</td>
    <td>{t.finishReason ?? ""}</td>
    <td>{(t.message?.tool_calls ?? []).map((c) => c.name).join(", ")}</td>
    <td>
      {t.drift ? <span class="badge drift">{`drift @${t.drift.position}`}</span> : null}
      {t.retries ? <span class="badge">{`retries ×${t.retries}`}</span> : null}
      {t.malformedToolCalls
        ? <span class="badge x">{`${t.malformedToolCalls} malformed calls`}</span>
        : null}
      {t.blackBox ? <span class="badge">black-box</span> : null}
      {t.error ? <span class="muted">{t.error}</span> : null}
    </td>
    <td class="num">
      {duration((t.timings.completed ?? Date.now()) - t.timings.received)}
    </td>
    <td>
      {t.blackBox
        ? ""
        : place
        ? <a href={links.sample(id, place.sample, place.from)}>{`sample ${place.sample}`}</a>
        : <a href={links.turnTokens(id, t.index) ?? links.turn(id, t.index)}>own ids</a>}
    </td>
  </tr>
);

function chainNote(c: Chain): string {
  if (c.label === "subagent") return `spawned by chain ${c.parent}`;
  if (c.label === "compaction") return `replaces chain ${c.parent}`;
  if (c.label === "rerender") {
    return `continues chain ${c.parent} from the engine's render (it departs at prompt[${c.evidence.position}])`;
  }
  return "";
}

const ChainItem: FC<
  {
    c: Chain;
    r: Rollout;
    links: Links;
    children_: Map<number | null, Chain[]>;
    places: ReturnType<typeof turnPlaces>;
  }
> = ({ c, r, links, children_, places }) => {
  const turns = r.turns.filter((t) => t.chain === c.id);
  return (
    <li class={`chain ${c.label}`} data-chain={c.id} data-label={c.label}>
      <span class={`badge ${c.label}`}>{c.label}</span> <b>{`chain ${c.id}`}</b>{" "}
      <span class="muted">
        {`${turns.length} turn${turns.length === 1 ? "" : "s"}  ${chainNote(c)}`}
      </span>
      <div>
        <Evidence evidence={c.evidence} />
      </div>
      <table class="turns">
        <tr>
          <th>turn</th>
          <th>mount</th>
          <th>status</th>
          <th class="num">prompt</th>
          <th class="num">added</th>
          <th class="num">sampled</th>
          <th>finish</th>
          <th>tool calls</th>
          <th>marks</th>
          <th class="num">time</th>
          <th>tokens</th>
        </tr>
        {turns.map((t) => <TurnRow t={t} id={r.id} links={links} place={places.get(t.id)?.[0]} />)}
      </table>
      {(children_.get(c.id) ?? []).length
        ? (
          <ul>
            {children_.get(c.id)!.map((k) => (
              <ChainItem c={k} r={r} links={links} children_={children_} places={places} />
            ))}
          </ul>
        )
        : null}
    </li>
  );
};

export const ChainTree: FC<{ r: Rollout; samples: readonly Sample[]; links: Links }> = (
  { r, samples, links },
) => {
  const children = new Map<number | null, Chain[]>();
  for (const c of r.chains) {
    const parent = c.parent !== null && r.chains[c.parent] ? c.parent : null;
    children.set(parent, [...(children.get(parent) ?? []), c]);
  }
  const places = turnPlaces(samples, r);
  return (
    <ul class="chains">
      {(children.get(null) ?? []).map((c) => (
        <ChainItem c={c} r={r} links={links} children_={children} places={places} />
      ))}
    </ul>
  );
};

export const SamplesTable: FC<
  { id: string; samples: readonly Sample[]; rollout: Rollout | null; note: string; links: Links }
> = ({ id, samples, rollout, note, links }) => (
  <div>
    <h2>
      Samples <span class="muted">{`(${samples.length}, ${note})`}</span>
    </h2>
    {samples.length === 0 ? <p class="muted">No samples.</p> : (
      <table class="samples">
        <tr>
          <th>sample</th>
          <th>branch</th>
          <th class="num">chain</th>
          <th class="num">turns</th>
          <th class="num">ids</th>
          <th class="num">trained</th>
          <th class="num">sampled, loss 0</th>
          <th class="num">SFT</th>
          <th class="num">reward</th>
          <th>label action</th>
        </tr>
        {samples.map((s) => {
          const { counts } = sampleLayout(s, rollout);
          return (
            <tr data-sample={s.index}>
              <td>
                {s.token_ids === false
                  ? `#${s.index} (messages only)`
                  : <a href={links.sample(id, s.index)}>{`#${s.index} tokens`}</a>}
              </td>
              <td>
                <span class={`badge ${s.branch}`}>{s.branch}</span>
              </td>
              <td class="num">{s.chain}</td>
              <td class="num">{s.turns.length}</td>
              <td class="num">{count(s.input_ids.length)}</td>
              <td class="num">{count(counts.t)}</td>
              <td class="num">{count(counts.m)}</td>
              <td class="num">{count(counts.s)}</td>
              <td class="num">{reward(s.reward)}</td>
              <td>{String(s.metadata?.label_action ?? "")}</td>
            </tr>
          );
        })}
      </table>
    )}
  </div>
);

function diffClass(line: string): string | undefined {
  if (line.startsWith("+++") || line.startsWith("---")) return "hunk";
  if (line.startsWith("+")) return "add";
  if (line.startsWith("-")) return "del";
  if (line.startsWith("@@")) return "hunk";
  return undefined;
}

export const ResultSection: FC<{ x: RunResult }> = ({ x }) => (
  <section class="result">
    <h2>Result</h2>
    <div class="cards">
      <div>
        <b>task</b>
        {`${x.task} #${x.sample}`}
      </div>
      <div>
        <b>reward</b>
        <span data-reward>{reward(x.reward)}</span>
      </div>
      <div>
        <b>harness / policy / sandbox</b>
        {`${x.harness} / ${x.policy} / ${x.sandbox}`}
      </div>
      <div>
        <b>agent</b>
        {x.agent
          ? `${x.agent.ok ? "ok" : "failed"}, exit ${x.agent.exit_code}${
            x.agent.timed_out ? ", timed out" : ""
          }, ${duration(x.agent.duration_ms)}`
          : "–"}
      </div>
      <div>
        <b>grading</b>
        {x.eval
          ? `patch ${x.eval.patch_applied ? "applied" : "NOT applied"}, tests ${
            x.eval.test_patch_applied ? "applied" : "NOT applied"
          }, ${duration(x.timings.eval_ms)}`
          : "–"}
      </div>
      <div>
        <b>total</b>
        {duration(x.timings.total_ms)}
      </div>
    </div>
    {x.error ? <p class="badge error">{x.error}</p> : null}
    {x.eval?.error ? <p class="badge error">{x.eval.error}</p> : null}
    {x.agent?.error ? <p class="muted">{`agent: ${x.agent.error}`}</p> : null}
    {x.agent?.final_text
      ? (
        <div class="msg assistant">
          <div class="role">agent's final text</div>
          <pre>{x.agent.final_text}</pre>
        </div>
      )
      : null}
    <h2>Tests</h2>
    <table class="tests">
      <tr>
        <th>test</th>
        <th>kind</th>
        <th>result</th>
        <th class="num">exit</th>
        <th class="num">time</th>
        <th>output</th>
      </tr>
      {x.tests.map((t) => (
        <tr data-test={t.id}>
          <td>
            <code>{t.id}</code>
          </td>
          <td>{t.kind}</td>
          <td>
            <span class={`badge ${t.passed ? "pass" : "fail"}`}>
              {t.passed ? "passed" : t.timed_out ? "timed out" : "failed"}
            </span>
          </td>
          <td class="num">{t.exit_code}</td>
          <td class="num">{duration(t.duration_ms)}</td>
          <td>
            <details>
              <summary class="muted">{`${t.output.length} chars`}</summary>
              <pre>{t.output}</pre>
            </details>
          </td>
        </tr>
      ))}
    </table>
  </section>
);

/** The agent's changes (what was graded), added and removed lines coloured. */
export const DiffSection: FC<{ x: RunResult }> = ({ x }) => (
  <section class="diff-section">
    <h2>Diff</h2>
    {x.diff
      ? (
        <pre class="diff msg">
          {x.diff.split("\n").map((line) => <div class={diffClass(line)}>{line || " "}</div>)}
        </pre>
      )
      : <p class="muted">The agent changed nothing.</p>}
  </section>
);

/** The part of the rollout page that refreshes itself while the rollout is live. */
export const RolloutBody: FC<{ v: ViewedRollout; links: Links }> = ({ v, links }) => {
  const samples = v.samples();
  const row = runRow(v);
  return (
    <div>
      {v.rollout?.status === "finished" || !v.rollout ? <span data-settled hidden /> : null}
      <div class="cards">
        <div>
          <b>status</b>
          <span class={`badge ${row.status}`} data-status>{row.status}</span>
        </div>
        <div>
          <b>reward</b>
          {reward(row.reward)}
        </div>
        <div>
          <b>backend</b>
          {row.backend ?? "–"}
        </div>
        <div>
          <b>turns</b>
          {row.turns
            ? `${row.turns.done} done, ${row.turns.pending} pending, ${row.turns.failed} failed`
            : "–"}
        </div>
        <div>
          <b>tokens</b>
          {count(row.tokens)}
        </div>
        <div>
          <b>started</b>
          {time(row.created)}
        </div>
        <div>
          <b>time</b>
          {duration(row.duration)}
        </div>
      </div>
      {v.rollout
        ? (
          <div>
            <h2>Chains</h2>
            <ChainTree r={v.rollout} samples={samples} links={links} />
          </div>
        )
        : <p class="muted">Only the runner's record of this rollout is known (no turn tree).</p>}
      <SamplesTable
        id={v.id}
        samples={samples}
        rollout={v.rollout}
        note={v.samplesNote}
        links={links}
      />
    </div>
  );
};

export const RolloutPage: FC<{ v: ViewedRollout; links: Links; refresh: string | null }> = (
  { v, links, refresh },
) => {
  const exportUrl = links.exportFile(v.id);
  const meta = v.rollout?.metadata ?? {};
  return (
    <Layout
      title={`rollgate · ${v.id}`}
      links={links}
      crumbs={<span>{`rollout ${v.id}`}</span>}
    >
      <h1>
        {`Rollout ${v.id}`}
        {exportUrl
          ? (
            <span>
              {"  "}
              <a href={exportUrl} download>export HTML</a>
            </span>
          )
          : null}
      </h1>
      {Object.keys(meta).length ? <Evidence evidence={meta} /> : null}
      {v.result ? <ResultSection x={v.result} /> : null}
      <div data-refresh={refresh ?? undefined}>
        <RolloutBody v={v} links={links} />
      </div>
      {v.result ? <DiffSection x={v.result} /> : null}
    </Layout>
  );
};
