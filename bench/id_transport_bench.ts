/**
 * Writing a 128k-id pending request for `GET /api/requests/next`: the JSON array (the default)
 * against the compact transport (`?ids=base64`, little-endian int32), both as the full response
 * body text the route sends, written from the prompt's `Int32Array` view.
 *
 *     deno bench -A bench/id_transport_bench.ts
 *
 * @module
 */
import { pendingBody } from "../gateway/mod.ts";
import type { PendingRequest } from "../generation/mod.ts";
import { rng } from "./agent_history.ts";

const random = rng(11);
const request: PendingRequest = {
  request_id: "req_bench",
  rollout_id: "bench",
  turn_id: "bench.0.abcd",
  routed_experts_from: 0,
  // Ids spread over Qwen3's vocabulary, as in real prompts (JSON length depends on digits).
  prompt_ids: Int32Array.from({ length: 131072 }, () => Math.floor(random() * 151643)),
  sampling: { max_tokens: 4096, temperature: 1, top_p: 1, stop_token_ids: [151645, 151643] },
};
const json = pendingBody(request, "json");
const compact = pendingBody(request, "base64");
console.log(
  `body: JSON ${(json.length / 1e3).toFixed(0)} kB, base64 ${(compact.length / 1e3).toFixed(0)} kB`,
);

Deno.bench("requests/next body, 128k ids: JSON array", { group: "ids", baseline: true }, () => {
  pendingBody(request, "json");
});

Deno.bench("requests/next body, 128k ids: base64 int32le", { group: "ids" }, () => {
  pendingBody(request, "base64");
});
