/**
 * Golden digests of what a rollout hands out (samples, the shared-prefix export, the turn tree),
 * pinning "no behaviour change" across refactors of the turn path: the digests were computed from
 * the code before the refactor, and a test fails as soon as one id, mask, label or message differs.
 *
 * What is random or a clock is normalized first: wall-clock fields are dropped, and the random
 * parts of ids (turn-id suffixes, tool-call and request ids) are numbered in order of appearance.
 * The digest is SHA-256 of the normalized JSON; a mismatch writes that JSON to a temp file named
 * in the failure, for diffing against a run of the old code.
 *
 * `ROLLGATE_GOLDEN=write` records the current digests instead of checking them;
 * `ROLLGATE_GOLDEN_DUMP=DIR` also writes every normalized output there.
 *
 * @module
 */
import { createHash } from "node:crypto";
import assert from "node:assert/strict";
import {
  buildSamples,
  type Rollout,
  type Sample,
  sharedPrefixTree,
  turnTree,
} from "../../trajectory/mod.ts";

const CLOCK_KEYS = new Set(["timings", "created_at", "finished_at", "at", "created"]);
/** Random ids (16+ hex digits: rollouts, tool calls) and turn-id suffixes (`.3.9f2c01ab`). */
const RANDOM = /[0-9a-f]{16,}|(?<=[._]\d+[._])[0-9a-f]{8}(?![0-9a-f])/g;

/** JSON of `value` without clock fields, random id parts numbered in order of appearance. */
export function normalized(value: unknown): string {
  const text = JSON.stringify(
    value,
    (key, v) =>
      CLOCK_KEYS.has(key) ? undefined : ArrayBuffer.isView(v) ? Array.from(v as Int32Array) : v,
  );
  const seen = new Map<string, string>();
  return text.replace(RANDOM, (m) => {
    let n = seen.get(m);
    if (!n) seen.set(m, n = `~${seen.size}`);
    return n;
  });
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function fileName(name: string): string {
  return name.replaceAll(/[^A-Za-z0-9._-]/g, "_");
}

/** One test file's digests, kept in a JSON file beside it. */
export class GoldenDigests {
  readonly #file: URL;
  readonly #writing = Deno.env.get("ROLLGATE_GOLDEN") === "write";
  readonly #expected: Record<string, string>;
  readonly #actual: Record<string, string> = {};

  constructor(file: URL) {
    this.#file = file;
    try {
      this.#expected = JSON.parse(Deno.readTextFileSync(file));
    } catch (e) {
      if (!this.#writing) throw new Error(`golden digests ${file.pathname}: ${e}`);
      this.#expected = {};
    }
  }

  /** Checks (or records) the digest of `value` under `name`. */
  check(name: string, value: unknown): void {
    const text = normalized(value);
    const digest = sha256(text);
    this.#actual[name] = digest;
    const dump = Deno.env.get("ROLLGATE_GOLDEN_DUMP");
    if (dump) Deno.writeTextFileSync(`${dump}/${fileName(name)}.json`, text);
    if (this.#writing) {
      const all = { ...this.#expected, ...this.#actual };
      const sorted = Object.fromEntries(Object.entries(all).sort(([a], [b]) => a.localeCompare(b)));
      Deno.writeTextFileSync(this.#file, JSON.stringify(sorted, null, 2) + "\n");
      return;
    }
    const expected = this.#expected[name];
    if (expected === digest) return;
    const dir = Deno.makeTempDirSync({ prefix: "rollgate-golden-" });
    const path = `${dir}/${fileName(name)}.json`;
    Deno.writeTextFileSync(path, text);
    assert.fail(
      expected === undefined
        ? `no golden digest for ${name} (record with ROLLGATE_GOLDEN=write); output in ${path}`
        : `${name} differs from the golden output (digest ${digest}, want ${expected}); ` +
          `normalized output in ${path}`,
    );
  }
}

/**
 * Samples without the fields issue 24 added (group, per-turn facts, version span, routing): the digests
 * recorded before pin that every earlier field is unchanged; the new ones are pinned by their own
 * tests (`tests/trajectory/sample_facts_test.ts`).
 */
// deno-lint-ignore no-explicit-any
function earlierFields(samples: (Sample | any)[]) {
  return samples.map((
    { group: _g, turn_spans: _t, version_span: _v, routed_experts: _r, metadata, ...rest },
  ) => {
    const { routed_experts_absent: _a, stale_turns: _s, ...earlier } = metadata;
    return { ...rest, metadata: earlier };
  });
}

/**
 * Samples and a tree export as JSON (over HTTP) without the fields issue 24 added, for digests
 * recorded before them.
 */
// deno-lint-ignore no-explicit-any
export function withoutIssue24Fields(value: { samples: any[]; tree: any }) {
  const { group: _, ...rollout } = value.tree.rollout;
  return {
    samples: earlierFields(value.samples),
    tree: {
      ...value.tree,
      rollout,
      // deno-lint-ignore no-explicit-any
      turns: value.tree.turns.map(({ facts: _f, ...t }: any) => t),
    },
  };
}

/** Everything a trainer or a viewer reads of a rollout, under each label policy. */
export function handedOut(rollout: Rollout, options: { promptIds?: boolean } = {}) {
  const tree = turnTree(rollout);
  const { group: _, ...summary } = tree.rollout;
  return {
    samples: earlierFields(buildSamples(rollout)),
    masked: earlierFields(
      buildSamples(rollout, { labels: { drift: "mask", rewrite: "mask", retry: "mask" } }),
    ),
    split: earlierFields(
      buildSamples(rollout, { rewardMode: "split", sftWeight: 0.5, sftTools: ["bash"] }),
    ),
    shared_prefix: sharedPrefixTree(rollout),
    tree: {
      ...tree,
      rollout: summary,
      // Turn facts (issue 24) are pinned by their own tests.
      turns: tree.turns.map(({ facts: _f, ...t }) => {
        if (options.promptIds !== false) return t;
        const { prompt_ids: _, ...rest } = t;
        return rest;
      }),
    },
  };
}
