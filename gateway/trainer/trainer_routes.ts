/**
 * The trainer API under `/api`, composed of Hono sub-apps: rollouts (`rollout_routes.ts`),
 * pending requests (`request_routes.ts`), the images turns showed (`image_routes.ts`), when a pause
 * gate is given pause/drain (`pause_routes.ts`), and when the trainer is a teacher its scoring
 * requests (`teacher_routes.ts`). Here: the admin token and JSON-only check every route passes first, and the
 * one mapping of errors to the API's error body. Shapes are documented in docs/api.md ("Trainer
 * side").
 *
 * @module
 */
import { type Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { presentedToken } from "../http/mod.ts";
import { apiErrorOf, apiFailure } from "./api_error.ts";
import { jsonBodyRefusal, sameToken } from "../security/mod.ts";
import { imageRoutes } from "./image_routes.ts";
import { pauseRoutes } from "./pause_routes.ts";
import { requestRoutes } from "./request_routes.ts";
import { teacherRoutes } from "./teacher_routes.ts";
import { rolloutRoutes } from "./rollout_routes.ts";
import { trainerContext, type TrainerRouteOptions } from "./trainer_context.ts";

function apiError(c: Context, status: number, message: string): Response {
  return c.json({ error: apiErrorOf(status, message) }, status as ContentfulStatusCode);
}

export function trainerRoutes(o: TrainerRouteOptions): Hono {
  const app = new Hono();
  app.use("*", async (c, next) => {
    if (o.adminToken && !sameToken(presentedToken(c.req.raw.headers), o.adminToken)) {
      return apiError(c, 401, "the trainer API requires the admin token (ROLLGATE_ADMIN_TOKEN)");
    }
    const notJson = jsonBodyRefusal(c.req.raw);
    if (notJson) return apiError(c, 415, notJson);
    await next();
  });
  // The sub-apps set no error handler of their own, so what they throw lands here.
  app.onError((e, c) => {
    const { status, error } = apiFailure(e);
    return c.json({ error }, status as ContentfulStatusCode);
  });
  const context = trainerContext(o);
  app.route("/", rolloutRoutes(context));
  if (o.pause) app.route("/", pauseRoutes(context, o.pause));
  app.route("/", requestRoutes(context));
  if (o.teacherQueue) app.route("/", teacherRoutes(context, o.teacherQueue));
  app.route("/", imageRoutes(o.rollouts));
  return app;
}
