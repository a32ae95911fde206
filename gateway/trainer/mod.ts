/**
 * The trainer wing of the gateway: the trainer API mounted under `/api` (rollouts, the pending
 * requests trainers answer, samples, pause/drain), its request schemas, the sample feed and the
 * id transport (`?ids=base64`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { trainerRoutes } from "./mod.ts";
 * import { PolicyModel } from "../../model/mod.ts";
 * import { RolloutActions } from "../../trajectory/mod.ts";
 *
 * const model = await PolicyModel.load();
 * const api = trainerRoutes({ rollouts: new RolloutActions({ model }), model, maxBodyBytes: 1 << 20 });
 * const created = await api.request("/rollouts", {
 *   method: "POST",
 *   headers: { "content-type": "application/json" },
 *   body: JSON.stringify({ metadata: { task: "demo" } }),
 * });
 * assert.equal(created.status, 201);
 * const { id } = await created.json();
 * assert.deepEqual((await (await api.request(`/rollouts/${id}`)).json()).turn_list, []);
 * // No agent has asked for a turn yet: the long poll (no wait) answers 204.
 * assert.equal((await api.request("/requests/next")).status, 204);
 * assert.equal((await api.request("/rollouts/nope")).status, 404);
 * // Pause for a weight sync: new generations are held until `/resume`.
 * assert.equal((await (await api.request("/pause", { method: "POST" })).json()).paused, true);
 * ```
 *
 * @module
 */
export { trainerRoutes } from "./trainer_routes.ts";
export { trainerErrorBody } from "./api_error.ts";
export { BASE64_IDS_MEDIA_TYPE, idsFromBase64, pendingBody } from "./id_transport.ts";
export { CompleteSchema, TeacherCompleteSchema } from "./trainer_schema.ts";
