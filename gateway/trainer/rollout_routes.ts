/**
 * The trainer API's rollouts: create, list, inspect, delete and finish a rollout, its samples and
 * its turn tree, and the stream of every finished rollout's samples (`/samples/stream`).
 *
 * @module
 */
import { Hono } from "hono";
import {
  compactTurnTree,
  sharedPrefixTree,
  turnTree,
  versionNumber,
} from "../../trajectory/mod.ts";
import { GatewayError } from "../gateway_error.ts";
import { sampleBody } from "./id_transport.ts";
import { SampleFeed } from "./sample_feed.ts";
import { sampleForm, samplesBody } from "./sample_forms.ts";
import { idEncoding, type TrainerContext } from "./trainer_context.ts";
import { CreateRolloutSchema, FinishSchema, TurnRewardSchema } from "./trainer_schema.ts";
import { turnView } from "./turn_view.ts";

export function rolloutRoutes({ options: o, body, rollout }: TrainerContext): Hono {
  const app = new Hono();
  const { rollouts } = o;
  const feed = new SampleFeed(rollouts.sampleLog);
  rollouts.onSamples(() => feed.wake());

  app.post("/rollouts", async (c) => {
    const spec = await body(c, CreateRolloutSchema, "rollout");
    if (spec.backend !== undefined && o.backends && !o.backends.includes(spec.backend)) {
      const known = o.backends.join(", ");
      throw new GatewayError(
        400,
        `invalid rollout: unknown backend ${spec.backend} (known: ${known})`,
      );
    }
    // Bound before the rollout exists: a setting the family does not take is a 400, and the
    // rollout's first turn renders with it.
    if (spec.template) await o.model.withTemplate(spec.template);
    const r = await rollouts.create({
      ...spec,
      backend: spec.backend ?? o.defaultRolloutBackend,
      splitSpecialTokens: spec.split_special_tokens ?? o.splitSpecialTokens ?? false,
      sampleOptions: {
        ...(spec.labels ? { labels: spec.labels } : {}),
        ...(spec.reward_mode ? { rewardMode: spec.reward_mode } : {}),
        ...(spec.sft?.weight !== undefined ? { sftWeight: spec.sft.weight } : {}),
        ...(spec.sft?.tools ? { sftTools: spec.sft.tools } : {}),
        ...(spec.max_staleness !== undefined ? { maxStaleness: spec.max_staleness } : {}),
      },
    });
    const base = o.publicUrl ?? `http://${c.req.header("host") ?? "127.0.0.1"}`;
    return c.json({
      id: r.id,
      token: r.token,
      base_url: `${base.replace(/\/$/, "")}/rollout/${r.id}`,
    }, 201);
  });
  app.get("/rollouts", (c) => c.json({ rollouts: rollouts.list().map((r) => r.summary(false)) }));
  app.get("/rollouts/:id", (c) => {
    const r = rollout(c);
    return c.json({ ...r.summary(), turn_list: r.turns.map((t) => turnView(t, r)) });
  });
  app.delete("/rollouts/:id", async (c) => {
    const r = rollout(c);
    await rollouts.delete(r);
    return c.json({ id: r.id, deleted: true });
  });
  app.post("/rollouts/:id/finish", async (c) => {
    const r = rollout(c);
    // Checked before anything changes: a bad `ids` must not finish the rollout.
    const encoding = idEncoding(c);
    const { reward, weight_version } = await body(c, FinishSchema, "finish request");
    if (r.status === "finished") throw new GatewayError(409, `rollout ${r.id} is already finished`);
    const samples = await rollouts.finish(
      r,
      reward ?? null,
      o.sampleOptions,
      versionNumber(weight_version),
    );
    const release = await r.holdRows();
    try {
      return c.json({
        id: r.id,
        reward: r.reward,
        samples: samples.map((s) => sampleBody(s, encoding)),
      });
    } finally {
      release();
    }
  });
  app.post("/rollouts/:id/turns/:turn/reward", async (c) => {
    const r = rollout(c);
    const { reward } = await body(c, TurnRewardSchema, "turn reward");
    const { turn, recorded } = await rollouts.rewardTurn(r, c.req.param("turn"), reward);
    return c.json({ id: r.id, turn: turn.id, index: turn.index, reward, recorded });
  });
  app.get("/rollouts/:id/samples", async (c) => {
    const r = rollout(c);
    const form = sampleForm(c.req.query("form"));
    const encoding = idEncoding(c);
    // Token rows another replica wrote are read before the samples are written out.
    const release = await r.holdRows();
    try {
      const json = samplesBody(r, form, encoding, o.sampleOptions);
      return c.body(json, 200, { "content-type": "application/json" });
    } finally {
      release();
    }
  });
  app.get("/rollouts/:id/tree", (c) => {
    const r = rollout(c);
    const form = c.req.query("form") ?? "full";
    if (form === "compact") return c.json(compactTurnTree(r));
    if (form !== "full") throw new GatewayError(400, `form must be full or compact, got ${form}`);
    return c.json({ ...turnTree(r), shared_prefix: sharedPrefixTree(r) });
  });
  app.get("/samples/stream", (c) => {
    const after = c.req.query("after");
    if (after !== undefined && !/^\d{1,15}$/.test(after)) {
      throw new GatewayError(400, `after must be a cursor (an integer ≥ 0), got ${after}`);
    }
    return feed.response(after === undefined ? undefined : Number(after));
  });
  return app;
}
