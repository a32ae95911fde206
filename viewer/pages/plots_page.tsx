/**
 * The plots page: what a researcher watches over a run, from {@link PlotData} (binned and capped
 * there): reward over time and by weight version, failures over time, the latest GRPO groups with
 * each member's reward and advantage, and the distributions of prompt and sampled lengths per turn
 * and of turns per rollout. Inline SVG from `charts.tsx`; refreshes itself while rollouts are live.
 *
 * @module
 */
import type { FC } from "hono/jsx";
import type { PlotData, TimeBin } from "../plot_data.ts";
import {
  type Axis,
  Bars,
  BASELINE,
  categoryAxis,
  Chart,
  linearAxis,
  px,
  py,
  timeAxis,
} from "./charts.tsx";
import { Layout, type Links, reward } from "./layout.tsx";

const dot = (n: number) => Math.round((2.5 + Math.min(4, Math.log2(n + 1))) * 10) / 10;

/** A reward axis that always shows 0 and 1. */
function rewardAxis(values: number[], label: string): Axis {
  return linearAxis(Math.min(0, ...values), Math.max(1, ...values), label);
}

const Line: FC<{ points: [number, number][] }> = ({ points }) =>
  points.length > 1
    ? <polyline class="trend" points={points.map(([x, y]) => `${x},${y}`).join(" ")} />
    : null;

const RewardOverTime: FC<{ time: NonNullable<PlotData["time"]>; x: Axis }> = ({ time, x }) => {
  const bins = time.bins.filter((b): b is TimeBin & { mean: number } => b.mean !== null);
  if (bins.length === 0) return <p class="muted">No rewards yet.</p>;
  const y = rewardAxis(bins.map((b) => b.mean), "mean reward");
  const mid = (b: TimeBin) => (b.from + b.to) / 2;
  return (
    <Chart
      name="reward-time"
      title="Reward over time"
      x={x}
      y={y}
      note={`mean reward of the rollouts that ended in each of ${time.bins.length} spans; dot size: how many`}
    >
      <Line points={bins.map((b) => [px(x, mid(b)), py(y, b.mean)])} />
      {bins.map((b) => (
        <circle
          class="pt"
          data-x={mid(b)}
          data-y={b.mean}
          data-n={b.rewarded}
          cx={px(x, mid(b))}
          cy={py(y, b.mean)}
          r={dot(b.rewarded)}
        >
          <title>{`${x.format(mid(b))}: mean ${reward(b.mean)} over ${b.rewarded}`}</title>
        </circle>
      ))}
    </Chart>
  );
};

const FailuresOverTime: FC<{ time: NonNullable<PlotData["time"]>; x: Axis }> = ({ time, x }) => {
  const y = linearAxis(0, Math.max(1, ...time.bins.map((b) => b.n)), "rollouts", true);
  return (
    <Chart
      name="failures-time"
      title="Failures over time"
      x={x}
      y={y}
      note="rollouts that ended in each span; red: with an error (setup, grading, agent or a failed turn)"
    >
      {time.bins.map((b) => {
        const left = px(x, b.from) + 0.5, width = Math.max(0.5, px(x, b.to) - px(x, b.from) - 1);
        return (
          <g data-from={b.from} data-to={b.to} data-n={b.n} data-failed={b.failed}>
            <rect
              class="bar ok"
              x={left}
              width={width}
              y={py(y, b.n)}
              height={BASELINE - py(y, b.n)}
            />
            <rect
              class="bar failed"
              x={left}
              width={width}
              y={py(y, b.failed)}
              height={BASELINE - py(y, b.failed)}
            />
            <title>{`${x.format(b.from)}: ${b.failed} of ${b.n} failed`}</title>
          </g>
        );
      })}
    </Chart>
  );
};

const RewardByVersion: FC<{ d: PlotData }> = ({ d }) => {
  if (d.versions.length === 0) {
    return <p class="muted">No weight versions reported (the engine or trainer sends none).</p>;
  }
  const x = categoryAxis(d.versions.map((v) => v.version), "weight version");
  const y = rewardAxis(d.versions.map((v) => v.mean), "mean reward");
  return (
    <Chart
      name="reward-version"
      title="Reward by weight version"
      x={x}
      y={y}
      note={`rollouts by the newest version their turns reported${
        d.versionsHidden ? `; the ${d.versionsHidden} oldest versions left out` : ""
      }`}
    >
      <Line points={d.versions.map((v, i) => [px(x, i), py(y, v.mean)])} />
      {d.versions.map((v, i) => (
        <circle
          class="pt"
          data-version={v.version}
          data-y={v.mean}
          data-n={v.n}
          cx={px(x, i)}
          cy={py(y, v.mean)}
          r={dot(v.n)}
        >
          <title>{`version ${v.version}: mean ${reward(v.mean)} over ${v.n}`}</title>
        </circle>
      ))}
    </Chart>
  );
};

/** Each member of each group, spread a little within its group's place. */
function memberX(x: Axis, group: number, member: number, members: number): number {
  const spread = Math.min(0.7, members * 0.08);
  const offset = members > 1 ? (member / (members - 1) - 0.5) * spread : 0;
  return px(x, group + offset);
}

const GroupPlots: FC<{ d: PlotData }> = ({ d }) => {
  const shown = d.groups.shown;
  if (shown.length === 0) return <p class="muted">No group has a reward yet.</p>;
  const x = categoryAxis(shown.map((g) => g.group), "group (latest last)");
  const all = shown.flatMap((g) => g.members);
  const yr = rewardAxis(all.map((m) => m.reward), "reward");
  const advantages = all.map((m) => m.advantage);
  const ya = linearAxis(Math.min(-1, ...advantages), Math.max(1, ...advantages), "advantage");
  const marks = (y: Axis, value: "reward" | "advantage") =>
    shown.map((g, gi) =>
      g.members.map((m, mi) => (
        <circle
          class={`pt member${m.advantage > 0 ? " up" : m.advantage < 0 ? " down" : ""}`}
          data-group={g.group}
          data-rollout={m.id}
          data-y={m[value]}
          cx={memberX(x, gi, mi, g.members.length)}
          cy={py(y, m[value])}
          r={3}
        >
          <title>{`${m.id}: reward ${reward(m.reward)}, advantage ${reward(m.advantage)}`}</title>
        </circle>
      ))
    );
  return (
    <div class="charts">
      <Chart name="group-rewards" title="Group rewards" x={x} y={yr}>{marks(yr, "reward")}</Chart>
      <Chart
        name="group-advantages"
        title="Group advantages"
        x={x}
        y={ya}
        note="(reward − group mean) / (group std + 1e-6), over the group's rewarded rollouts"
      >
        <line class="zero" x1={px(x, x.min)} x2={px(x, x.max)} y1={py(ya, 0)} y2={py(ya, 0)} />
        {marks(ya, "advantage")}
      </Chart>
    </div>
  );
};

const GroupTable: FC<{ d: PlotData }> = ({ d }) => (
  <table class="groups">
    <tr>
      <th>group</th>
      <th class="num">rewarded</th>
      <th class="num">waiting</th>
      <th class="num">mean</th>
      <th class="num">std</th>
      <th>rewards</th>
    </tr>
    {[...d.groups.shown].reverse().map((g) => (
      <tr data-group={g.group}>
        <td>{g.group}</td>
        <td class="num">{g.members.length}</td>
        <td class="num">{g.waiting}</td>
        <td class="num">{reward(g.mean)}</td>
        <td class="num">{reward(g.std)}</td>
        <td>{g.members.map((m) => reward(m.reward)).join(" ")}</td>
      </tr>
    ))}
  </table>
);

const Histogram: FC<
  { name: string; title: string; bins: PlotData["prompts"]; xLabel: string; yLabel: string }
> = ({ name, title, bins, xLabel, yLabel }) => {
  if (bins.length === 0) return <p class="muted">{`${title}: nothing recorded yet.`}</p>;
  const x = linearAxis(0, bins.at(-1)!.to, xLabel, true);
  const y = linearAxis(0, Math.max(1, ...bins.map((b) => b.n)), yLabel, true);
  return (
    <Chart name={name} title={title} x={x} y={y}>
      <Bars x={x} y={y} bins={bins} />
    </Chart>
  );
};

/** The part of the page that refreshes itself while rollouts are live. */
export const PlotsBody: FC<{ d: PlotData }> = ({ d }) => {
  const x = d.time ? timeAxis(d.time.from, d.time.to, "ended (UTC)") : null;
  return (
    <div>
      <p class="stats" data-stats>
        {`${d.rollouts} rollouts · ${d.rewarded} with a reward (mean ${reward(d.meanReward)}) · ` +
          `${d.failed} with an error · ${d.groups.total} groups, ${d.groups.flat} of them flat ` +
          "(every reward equal: no learning signal)"}
      </p>
      <h2>Reward and failures</h2>
      <div class="charts">
        {d.time && x
          ? [<RewardOverTime time={d.time} x={x} />, <FailuresOverTime time={d.time} x={x} />]
          : <p class="muted">No rollouts yet.</p>}
        <RewardByVersion d={d} />
      </div>
      <h2>
        GRPO groups{" "}
        <span class="muted">
          {`(the latest ${d.groups.shown.length} of ${d.groups.total} with a reward)`}
        </span>
      </h2>
      <GroupPlots d={d} />
      {d.groups.shown.length ? <GroupTable d={d} /> : null}
      <h2>
        Lengths <span class="muted">{`(${d.lengthTurns} turns with ids)`}</span>
      </h2>
      <div class="charts">
        <Histogram
          name="prompt-lengths"
          title="Prompt length per turn"
          bins={d.prompts}
          xLabel="prompt ids"
          yLabel="turns"
        />
        <Histogram
          name="sampled-lengths"
          title="Sampled length per turn"
          bins={d.sampled}
          xLabel="sampled ids"
          yLabel="turns"
        />
        <Histogram
          name="turns-per-rollout"
          title="Turns per rollout"
          bins={d.turns}
          xLabel="turns"
          yLabel="rollouts"
        />
      </div>
    </div>
  );
};

export const PlotsPage: FC<
  { d: PlotData; links: Links; refresh: { url: string; every: number } | null }
> = ({ d, links, refresh }) => (
  <Layout title="rollgate · plots" links={links}>
    <h1>Plots</h1>
    <div data-refresh={refresh?.url} data-every={refresh?.every}>
      <PlotsBody d={d} />
    </div>
  </Layout>
);
