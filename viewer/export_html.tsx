/**
 * One self-contained HTML file for a rollout: summary, result, chains and every turn's new
 * messages, and each sample's token view with all its ids (paged by the page's own script).
 * Style, script and data are inline; the file loads nothing.
 *
 * @module
 */
import {
  DiffSection,
  Layout,
  type Links,
  ResultSection,
  RolloutBody,
  SampleHeader,
  TokenSection,
  TurnDetails,
} from "./pages/mod.ts";
import type { ViewedRollout } from "./source.ts";
import { sampleLayout, sampleTokens } from "./token_data.ts";
import type { TokenText } from "./token_text.ts";

/** Links inside the exported file: every page is a section of it. */
const EXPORT_LINKS: Links = {
  runs: () => "#top",
  rollout: () => "#top",
  turn: (_id, index) => `#turn-${index}`,
  turnTokens: () => null,
  sample: (_id, index) => `#sample-${index}`,
  exportFile: () => null,
  plots: () => null,
};

export async function exportHtml(
  v: ViewedRollout,
  text: TokenText,
  pageSize: number,
): Promise<string> {
  const samples = v.samples();
  const sections = [];
  for (const s of samples) {
    if (s.token_ids === false) continue;
    const { segments, counts } = sampleLayout(s, v.rollout);
    const data = await sampleTokens(text, s, v.rollout, 0, s.input_ids.length);
    sections.push(
      <section id={`sample-${s.index}`}>
        <h2>{`Sample ${s.index} tokens`}</h2>
        <SampleHeader s={s} note={v.samplesNote} />
        <TokenSection
          data={data}
          dataId={`tokens-${s.index}`}
          size={pageSize}
          mode="export"
          at={() => `#sample-${s.index}`}
          segments={segments}
          counts={counts}
        />
      </section>,
    );
  }
  const r = v.rollout;
  const page = (
    <Layout
      title={`rollgate · ${v.id} (export)`}
      links={EXPORT_LINKS}
      crumbs={<span>{`rollout ${v.id} · exported ${new Date().toISOString()}`}</span>}
    >
      <h1 id="top">{`Rollout ${v.id}`}</h1>
      {v.result ? <ResultSection x={v.result} /> : null}
      <RolloutBody v={v} links={EXPORT_LINKS} />
      {v.result ? <DiffSection x={v.result} /> : null}
      {r
        ? (
          <div>
            <h2>Turns</h2>
            {r.turns.map((t) => (
              <details id={`turn-${t.index}`} class="turn">
                <summary>{`turn #${t.index} · chain ${t.chain} · ${t.status}`}</summary>
                <TurnDetails t={t} r={r} samples={samples} links={EXPORT_LINKS} all={false} />
              </details>
            ))}
          </div>
        )
        : null}
      {sections}
    </Layout>
  );
  return `<!DOCTYPE html>${page}`;
}
