/**
 * The token view: a sample's (or a turn's) ids one by one, coloured by role, a red underline as
 * strong as the sampled id was unlikely, drift outlined with both sides, a tooltip per token.
 * The ids are drawn by the page script from the JSON data in the page, one page at a time.
 *
 * @module
 */
import type { FC } from "hono/jsx";
import type { Sample } from "../../trajectory/mod.ts";
import type { RoleCounts, TokenData, TurnSegment } from "../token_data.ts";
import { count, JsonScript, Layout, type Links, reward } from "./layout.tsx";

export const Legend: FC = () => (
  <div class="legend">
    <span>
      <span class="sw k-c">abc</span>prompt context (template, history, bridge)
    </span>
    <span>
      <span class="sw k-s">abc</span>tool output under the SFT mask
    </span>
    <span>
      <span class="sw k-t">abc</span>sampled and trained (loss mask 1)
    </span>
    <span>
      <span class="sw k-m">abc</span>sampled, loss 0 here (masked, trained elsewhere, or in no
      sample)
    </span>
    <span>
      <span class="sw k-x">abc</span>loss 1 on an id the policy did not sample (broken)
    </span>
    <span>
      <span class="sw heat">abc</span>red underline: unlikely sampled id (opacity 1 − p)
    </span>
    <span>
      <span class="sw drift">abc</span>drift: where the template would render differently
    </span>
  </div>
);

/** A position to jump to: a link the script follows (served) or pages to locally (export). */
const Jump: FC<{ href: string; from: number; children?: unknown }> = ({ href, from, children }) => (
  <a href={href} data-from={from}>{children}</a>
);

export const TokenSection: FC<
  {
    data: TokenData;
    dataId: string;
    size: number;
    mode: "served" | "export";
    /** Link to a position (served: a page URL; export: an anchor the script intercepts). */
    at: (from: number) => string;
    segments?: TurnSegment[] | null;
    counts?: RoleCounts;
  }
> = ({ data, dataId, size, mode, at, segments, counts }) => {
  const drifts = data.marks.filter((m) => m.kind === "drift");
  const page = (i: number) => Math.floor(i / size) * size;
  return (
    <section class="tokens">
      <Legend />
      {counts
        ? (
          <p data-counts>
            {`${count(data.total)} ids: ${count(counts.t)} trained, ${
              count(counts.m)
            } sampled with loss 0, ${count(counts.s)} tool-output ids under the SFT mask, ${
              count(counts.c)
            } other context`}
            {counts.x ? <b class="badge x">{`${counts.x} ids with loss but not sampled`}</b> : null}
          </p>
        )
        : null}
      {data.sampledKnown ? null : (
        <p class="muted">
          The turns of this sample are not known here: ids with loss 0 show as context even where
          the policy sampled them.
        </p>
      )}
      {drifts.length
        ? (
          <div class="drifts">
            {drifts.map((m) =>
              m.kind === "drift"
                ? (
                  <p class="sides">
                    <span class="badge drift">drift</span>
                    <Jump href={at(page(m.at))} from={page(m.at)}>{`turn #${m.index}`}</Jump>
                    {` at id ${m.at}: sampled `}
                    <code>{JSON.stringify(m.sampled)}</code>
                    {", the template renders "}
                    <code>{JSON.stringify(m.rendered)}</code>
                  </p>
                )
                : null
            )}
          </div>
        )
        : null}
      {segments && segments.length > 1
        ? (
          <details>
            <summary>{`${segments.length} turns in this sample`}</summary>
            <table>
              <tr>
                <th>turn</th>
                <th class="num">added ids</th>
                <th class="num">sampled ids</th>
              </tr>
              {segments.map((s) => (
                <tr>
                  <td>
                    <Jump href={at(s.start)} from={s.start}>{`#${s.turn.index}`}</Jump>
                  </td>
                  <td class="num">{`${s.start}–${s.output}`}</td>
                  <td class="num">
                    <Jump href={at(s.output)} from={s.output}>{`${s.output}–${s.end}`}</Jump>
                  </td>
                </tr>
              ))}
            </table>
          </details>
        )
        : null}
      <div class="pager"></div>
      <div class="tok" data-tokens={dataId} data-size={size} data-mode={mode}></div>
      <JsonScript id={dataId} data={data} />
    </section>
  );
};

export const SampleHeader: FC<{ s: Sample; note: string }> = ({ s, note }) => (
  <div class="cards">
    <div>
      <b>branch</b>
      <span class={`badge ${s.branch}`}>{s.branch}</span>
      {` chain ${s.chain}`}
    </div>
    <div>
      <b>label action</b>
      {String(s.metadata?.label_action ?? "–")}
    </div>
    <div>
      <b>reward</b>
      {reward(s.reward)}
    </div>
    <div>
      <b>turns</b>
      {s.turns.length}
    </div>
    <div>
      <b>finish</b>
      {s.finish_reason ?? "–"}
    </div>
    <div>
      <b>samples</b>
      {note}
    </div>
  </div>
);

export const TokensPage: FC<
  {
    title: string;
    heading: string;
    rolloutId: string;
    links: Links;
    sample?: Sample;
    note: string;
    data: TokenData;
    size: number;
    at: (from: number) => string;
    segments?: TurnSegment[] | null;
    counts?: RoleCounts;
  }
> = ({ title, heading, rolloutId, links, sample, note, ...section }) => (
  <Layout
    title={title}
    links={links}
    crumbs={
      <span>
        <a href={links.rollout(rolloutId)}>{`rollout ${rolloutId}`}</a>
        {` / ${heading}`}
      </span>
    }
  >
    <h1>{heading}</h1>
    {sample ? <SampleHeader s={sample} note={note} /> : <p class="muted">{note}</p>}
    <TokenSection {...section} dataId="token-data" mode="served" />
  </Layout>
);
