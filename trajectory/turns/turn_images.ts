/**
 * What a turn does with the images of its request before it is registered and while its prompt
 * renders: refuse them when the policy cannot be shown them (a text-only family, a vision family
 * whose image tokens rollgate does not count, a size its processor refuses), and store those its
 * store lacks. Both cost what the request's distinct images are (`CanonicalRequest.images`), not
 * its history.
 *
 * @module
 */
import type { CanonicalRequest, RequestImage } from "../../canonical/mod.ts";
import type { PolicyModel } from "../../model/mod.ts";
import type { ImageStore } from "../image_store.ts";
import { TurnError } from "../turn_error.ts";

/** Throws an `invalid_request` `TurnError` when `model` cannot be shown the request's images. */
export function requireImagesShown(model: PolicyModel, req: CanonicalRequest): void {
  if (!req.images?.size) return;
  const { family, vision } = model.format;
  const count = req.images.size === 1 ? "an image" : `${req.images.size} images`;
  if (!vision) {
    throw new TurnError(
      "invalid_request",
      `the request shows ${count}, and the policy's model family (${family}) reads text only; ` +
        "leave the images out, or serve a vision model (qwen3-vl, gemma4)",
    );
  }
  if (!vision.tokens) {
    throw new TurnError(
      "invalid_request",
      `the request shows ${count}; rollgate does not count ${family}'s image tokens yet ` +
        "(images are rendered for qwen3-vl and gemma4)",
    );
  }
  for (const { ref } of req.images.values()) {
    const tokens = vision.tokens(ref);
    if (typeof tokens !== "number") {
      throw new TurnError(
        "invalid_request",
        `a ${ref.width}×${ref.height} ${ref.mime} image is refused: ${tokens.refused}`,
      );
    }
  }
}

/**
 * Stores each image `store` lacks: resolves with an `image_store_failed` `TurnError` when it
 * cannot (never rejects, so it may run unwatched while a prompt renders), else null.
 */
export async function storeImages(
  store: ImageStore | undefined,
  images: ReadonlyMap<string, RequestImage> | undefined,
): Promise<TurnError | null> {
  if (!images?.size) return null;
  if (!store) return new TurnError("image_store_failed", "this gateway keeps no images");
  try {
    await Promise.all([...images].map(([hash, { bytes }]) => store.putImage(hash, bytes)));
    return null;
  } catch (e) {
    return new TurnError(
      "image_store_failed",
      `the images were not stored: ${(e as Error).message}`,
    );
  }
}
