/**
 * The runs page: every rollout with its status, backend, turns, tokens, reward, tests and
 * labels; filters and sorting from the query string; a per-task summary.
 *
 * @module
 */
import type { FC } from "hono/jsx";
import { type RunQuery, type RunRow, SORT_KEYS, type TaskGroup } from "../run_rows.ts";
import { count, duration, Layout, type Links, reward, time } from "./layout.tsx";

function queryString(q: RunQuery, change: Partial<RunQuery> = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...q, ...change })) if (v) params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : "";
}

const SortHeader: FC<{ label: string; key_: string; q: RunQuery; num?: boolean }> = (
  { label, key_, q, num },
) => {
  const active = (q.sort ?? "created") === key_;
  const dir = active && q.dir === "asc" ? "desc" : active ? "asc" : undefined;
  const arrow = active ? (q.dir === "asc" ? " ▲" : " ▼") : "";
  return (
    <th class={num ? "num" : undefined}>
      <a href={queryString(q, { sort: key_, dir })}>{label}{arrow}</a>
    </th>
  );
};

const Row: FC<{ r: RunRow; links: Links }> = ({ r, links }) => (
  <tr data-rollout={r.id}>
    <td>
      <a href={links.rollout(r.id)}>{r.id}</a>
    </td>
    <td>
      <span class={`badge ${r.status}`}>{r.status}</span>
    </td>
    <td>
      {r.task ?? <span class="muted">–</span>}
      {r.sample !== null ? <span class="muted">{` #${r.sample}`}</span> : null}
    </td>
    <td>{r.harness ?? "–"}</td>
    <td>{r.backend ?? "–"}</td>
    <td class="num" data-col="turns">
      {r.turns ? `${r.turns.done}/${r.turns.total}` : "–"}
      {r.turns?.pending ? <span class="badge pending">{`${r.turns.pending} pending`}</span> : null}
      {r.turns?.failed ? <span class="badge failed">{`${r.turns.failed} failed`}</span> : null}
    </td>
    <td class="num" data-col="tokens">{count(r.tokens)}</td>
    <td class="num" data-col="reward">{reward(r.reward)}</td>
    <td class="num">
      {r.tests
        ? (
          <span class={`badge ${r.tests.passed === r.tests.total ? "pass" : "fail"}`}>
            {`${r.tests.passed}/${r.tests.total}`}
          </span>
        )
        : "–"}
    </td>
    <td>
      {Object.entries(r.labels).map(([label, n]) => (
        <span class={`badge ${label}`}>{n > 1 ? `${label} ×${n}` : label}</span>
      ))}
      {r.drift ? <span class="badge drift">{`drift ×${r.drift}`}</span> : null}
      {r.retries ? <span class="badge">{`retries ×${r.retries}`}</span> : null}
    </td>
    <td class="muted" title={r.error ?? undefined}>
      {r.error ? (r.error.length > 90 ? `${r.error.slice(0, 90)}…` : r.error) : ""}
    </td>
    <td class="muted">{time(r.created)}</td>
    <td class="num">{duration(r.duration)}</td>
  </tr>
);

/** The part of the page that refreshes itself while rollouts are live. */
/** Rows shown unless the query asks for more: a long table costs every refresh. */
export const DEFAULT_ROW_LIMIT = 200;

export const RunsTables: FC<{ rows: RunRow[]; groups: TaskGroup[]; q: RunQuery; links: Links }> = (
  { rows, groups, q, links },
) => {
  const limit = Number(q.limit) > 0 ? Number(q.limit) : DEFAULT_ROW_LIMIT;
  return (
    <div>
      {groups.length > 0
        ? (
          <div>
            <h2>Tasks</h2>
            <table>
              <tr>
                <th>task</th>
                <th class="num">rollouts</th>
                <th class="num">errors</th>
                <th class="num">mean reward</th>
                <th class="num">best</th>
              </tr>
              {groups.map((g) => (
                <tr>
                  <td>
                    <a href={queryString(q, { task: g.task })}>{g.task}</a>
                  </td>
                  <td class="num">{g.rollouts}</td>
                  <td class="num">{g.errors}</td>
                  <td class="num">{g.mean === null ? "–" : g.mean.toFixed(3)}</td>
                  <td class="num">{reward(g.best)}</td>
                </tr>
              ))}
            </table>
          </div>
        )
        : null}
      <h2>
        Rollouts <span class="muted" data-count>{`(${rows.length})`}</span>
      </h2>
      {rows.length > limit
        ? (
          <p class="muted">
            {`Showing the first ${limit}; `}
            <a href={queryString(q, { limit: String(rows.length) })}>show all</a>
          </p>
        )
        : null}
      <table class="runs">
        <tr>
          <th>rollout</th>
          <SortHeader label="status" key_="status" q={q} />
          <SortHeader label="task" key_="task" q={q} />
          <th>harness</th>
          <th>backend</th>
          <SortHeader label="turns" key_="turns" q={q} num />
          <SortHeader label="tokens" key_="tokens" q={q} num />
          <SortHeader label="reward" key_="reward" q={q} num />
          <th class="num">tests</th>
          <th>chains</th>
          <th>error</th>
          <SortHeader label="started" key_="created" q={q} />
          <SortHeader label="time" key_="duration" q={q} num />
        </tr>
        {rows.slice(0, limit).map((r) => <Row r={r} links={links} />)}
      </table>
      {rows.length === 0 ? <p class="muted">No rollouts match.</p> : null}
    </div>
  );
};

const Select: FC<{ name: keyof RunQuery; q: RunQuery; options: string[]; all: string }> = (
  { name, q, options, all },
) => (
  <select name={name} data-submit>
    <option value="">{all}</option>
    {options.map((o) => <option value={o} selected={q[name] === o}>{o}</option>)}
  </select>
);

export const RunsPage: FC<
  {
    rows: RunRow[];
    groups: TaskGroup[];
    q: RunQuery;
    links: Links;
    /** URL of the refreshable part; none when nothing can change. */
    refresh: string | null;
    tasks: string[];
  }
> = ({ rows, groups, q, links, refresh, tasks }) => (
  <Layout title="rollgate · runs" links={links} crumbs={<span>runs</span>}>
    <h1>Runs</h1>
    <form class="filters" method="get">
      <input type="search" name="q" value={q.q ?? ""} placeholder="id, task or harness" />
      <Select name="task" q={q} options={tasks} all="every task" />
      <Select
        name="status"
        q={q}
        options={["active", "finished", "error", "recorded"]}
        all="any status"
      />
      <Select
        name="label"
        q={q}
        options={["main", "subagent", "compaction", "side"]}
        all="any chain"
      />
      <Select name="error" q={q} options={["yes", "no"]} all="errors or not" />
      <Select name="sort" q={q} options={SORT_KEYS} all="sort: started" />
      <Select name="dir" q={q} options={["desc", "asc"]} all="order" />
      <button type="submit">apply</button>
      {Object.values(q).some(Boolean) ? <a href={links.runs()}>clear</a> : null}
    </form>
    <div data-refresh={refresh ?? undefined}>
      <RunsTables rows={rows} groups={groups} q={q} links={links} />
    </div>
  </Layout>
);
