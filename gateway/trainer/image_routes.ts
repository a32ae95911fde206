/**
 * `GET /api/images/:hash`: the bytes of an image a turn showed, by the sha256 samples name it by
 * (`images[].hash`), so a trainer computes pixel values from the very bytes the policy was shown.
 * The type is read from the bytes' header; the body never changes for a hash, so it may be cached
 * for good.
 *
 * @module
 */
import { Hono } from "hono";
import { readImageHeader } from "../../canonical/mod.ts";
import type { RolloutActions } from "../../trajectory/mod.ts";
import { GatewayError } from "../gateway_error.ts";

const HASH = /^[0-9a-f]{64}$/;

export function imageRoutes(rollouts: RolloutActions): Hono {
  const app = new Hono();
  app.get("/images/:hash", async (c) => {
    const hash = c.req.param("hash");
    if (!HASH.test(hash)) {
      throw new GatewayError(400, "an image is named by its sha256: 64 lowercase hex digits");
    }
    const bytes = await rollouts.readImage(hash);
    if (!bytes) throw new GatewayError(404, `no image ${hash}`);
    return new Response(bytes as Uint8Array<ArrayBuffer>, {
      headers: {
        "content-type": readImageHeader(bytes)?.mime ?? "application/octet-stream",
        "cache-control": "private, max-age=31536000, immutable",
        etag: `"${hash}"`,
      },
    });
  });
  return app;
}
