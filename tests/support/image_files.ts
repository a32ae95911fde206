/**
 * The real image files of `canonical/__fixtures__/images/` (written by Pillow,
 * `tests/reference/make_image_fixtures.py`) as tests send them: bytes, base64, a `data:` URL and
 * the `ImageRef` the gateway makes of them.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { type ImageRef, readImageHeader } from "../../canonical/mod.ts";

/** Where the files are. */
export const IMAGE_FIXTURES = decodeURIComponent(
  new URL("../../canonical/__fixtures__/images/", import.meta.url).pathname,
);

export interface FixtureImage {
  name: string;
  bytes: Uint8Array;
  base64: string;
  dataUrl: string;
  ref: ImageRef;
}

/** One fixture file (a 333×127 PNG by default). */
export async function fixtureImage(name = "rgb-333x127.png"): Promise<FixtureImage> {
  const bytes = await Deno.readFile(IMAGE_FIXTURES + name);
  const header = readImageHeader(bytes);
  if (!header) throw new Error(`${name} is not an image`);
  const base64 = (bytes as unknown as { toBase64(): string }).toBase64();
  return {
    name,
    bytes,
    base64,
    dataUrl: `data:${header.mime};base64,${base64}`,
    ref: { hash: createHash("sha256").update(bytes).digest("hex"), ...header },
  };
}
