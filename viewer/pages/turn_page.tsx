/**
 * One turn: where it sits (chain, mount, parent), what it cost, the messages it added to its
 * parent's history and the answer the policy sampled, in the agent's protocol terms.
 *
 * @module
 */
import type { FC } from "hono/jsx";
import type { Rollout, Sample, Turn } from "../../trajectory/mod.ts";
import { Assistant, Messages, termsOf } from "./messages.tsx";
import { count, duration, Evidence, Layout, type Links, time } from "./layout.tsx";
import { turnPlaces } from "./rollout_page.tsx";

/** Index of the first message this turn added to its parent's history and answer. */
export function firstNewMessage(t: Turn): number {
  return t.parent ? Math.min(t.parent.messages.length + 1, t.messages.length) : 0;
}

export const TurnDetails: FC<
  { t: Turn; r: Rollout; samples: readonly Sample[]; links: Links; all: boolean }
> = ({ t, r, samples, links, all }) => {
  const chain = r.chains[t.chain];
  const first = all ? 0 : firstNewMessage(t);
  const places = turnPlaces(samples, r).get(t.id) ?? [];
  const own = links.turnTokens(r.id, t.index);
  return (
    <div>
      <div class="cards">
        <div>
          <b>chain</b>
          <span class={`badge ${chain?.label}`}>{chain?.label}</span>
          {` chain ${t.chain}`}
        </div>
        <div>
          <b>mount</b>
          {t.mount}
          {t.parent
            ? (
              <span>
                {" on "}
                <a href={links.turn(r.id, t.parent.index)}>{`#${t.parent.index}`}</a>
              </span>
            )
            : null}
        </div>
        <div>
          <b>status</b>
          <span class={`badge ${t.status}`}>{t.status}</span>
        </div>
        <div>
          <b>protocol</b>
          {t.protocol}
        </div>
        <div>
          <b>prompt ids</b>
          {`${count(t.promptLength)} (${count(t.bridgeIds.length + t.deltaIds.length)} added)`}
        </div>
        <div>
          <b>sampled ids</b>
          {`${count(t.outputIds.length)}${t.finishReason ? ` (${t.finishReason})` : ""}`}
        </div>
        <div>
          <b>received</b>
          {time(t.timings.received)}
        </div>
        <div>
          <b>render / generation</b>
          {`${duration((t.timings.rendered ?? t.timings.received) - t.timings.received)} / ${
            duration(
              t.timings.completed === undefined
                ? null
                : t.timings.completed - (t.timings.rendered ?? t.timings.received),
            )
          }`}
        </div>
        {t.weightVersion !== undefined
          ? (
            <div>
              <b>weights</b>
              {String(t.weightVersion)}
            </div>
          )
          : null}
      </div>
      {t.error ? <p class="badge error">{t.error}</p> : null}
      {t.retries ? <p>{`Answered ${t.retries} identical re-send(s) from this turn.`}</p> : null}
      {t.drift
        ? (
          <p>
            <span class="badge drift">drift</span>
            {` at output[${t.drift.position}]: the template would render the answer differently; ` +
              `the sampled ids are kept (see the token view).`}
          </p>
        )
        : null}
      {chain && chain.root === t ? <Evidence evidence={chain.evidence} /> : null}
      <p>
        {"Tokens: "}
        {places.length
          ? places.map((p) => (
            <span>
              <a href={links.sample(r.id, p.sample, p.from)}>
                {`sample ${p.sample}${p.trained ? " (trained here)" : ""}`}
              </a>
              {"  "}
            </span>
          ))
          : null}
        {t.blackBox ? "none (black-box turn)" : own
          ? (
            <a href={own}>
              {places.length ? "this turn's ids alone" : "this turn's ids (in no sample)"}
            </a>
          )
          : null}
      </p>
      <h2>
        {all ? "History" : `New messages`}{" "}
        <span class="muted">
          {`${
            t.messages.length - first
          } of ${t.messages.length}; the template rendered the last ${t.renderedMessages}`}
        </span>
      </h2>
      <Messages messages={t.messages.slice(first)} history={t.messages} protocol={t.protocol} />
      <h2>Answer sampled by the policy</h2>
      {t.message
        ? <Assistant m={t.message} terms={termsOf(t.protocol)} />
        : <p class="muted">{t.status === "pending" ? "Still generating." : "No answer."}</p>}
      {t.tools.length
        ? (
          <details>
            <summary>{`${t.tools.length} tools offered`}</summary>
            {t.tools.map((tool) => (
              <div class="msg system">
                <div class="role">{`${tool.kind} ${tool.name}`}</div>
                <pre>{`${tool.description ?? ""}\n${JSON.stringify(tool.parameters ?? {}, null, 2)}`}</pre>
              </div>
            ))}
          </details>
        )
        : null}
    </div>
  );
};

export const TurnPage: FC<
  { t: Turn; r: Rollout; samples: readonly Sample[]; links: Links; all: boolean }
> = (props) => {
  const { t, r, links, all } = props;
  // Neighbours on the same chain.
  const chain = r.turns.filter((x) => x.chain === t.chain);
  const previous = chain.findLast((x) => x.index < t.index);
  const next = chain.find((x) => x.index > t.index);
  return (
    <Layout
      title={`rollgate · ${r.id} #${t.index}`}
      links={links}
      crumbs={
        <span>
          <a href={links.rollout(r.id)}>{`rollout ${r.id}`}</a>
          {` / turn #${t.index}`}
        </span>
      }
    >
      <h1>
        {`Turn #${t.index} `}
        <span class="muted">{t.id}</span>
      </h1>
      <p>
        {previous ? <a href={links.turn(r.id, previous.index)}>{`← #${previous.index}`}</a> : null}
        {"  "}{all
          ? <a href={links.turn(r.id, t.index)}>show only the new messages</a>
          : <a href={`${links.turn(r.id, t.index)}?history=all`}>show the whole history</a>}{"  "}
        {next ? <a href={links.turn(r.id, next.index)}>{`#${next.index} →`}</a> : null}
      </p>
      <TurnDetails {...props} all={all} />
    </Layout>
  );
};
