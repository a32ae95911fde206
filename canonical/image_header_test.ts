import assert from "node:assert/strict";
import { readImageHeader } from "./image_header.ts";

const DIR = new URL("./__fixtures__/images/", import.meta.url);
/** What Pillow reports for each file (`tests/reference/make_image_fixtures.py` wrote both). */
const SIZES: Record<string, { format: string; width: number; height: number }> = JSON.parse(
  await Deno.readTextFile(new URL("sizes.json", DIR)),
);
const MIME: Record<string, string> = {
  PNG: "image/png",
  JPEG: "image/jpeg",
  GIF: "image/gif",
  WEBP: "image/webp",
};

Deno.test("image header: every fixture's format and size are what Pillow reads", async () => {
  assert.ok(Object.keys(SIZES).length >= 16);
  for (const [name, expected] of Object.entries(SIZES)) {
    const bytes = await Deno.readFile(new URL(name, DIR));
    assert.deepEqual(readImageHeader(bytes), {
      mime: MIME[expected.format],
      width: expected.width,
      height: expected.height,
    }, name);
  }
});

Deno.test("image header: a header cut anywhere before its size is no image, never a wrong size", async () => {
  for (const name of Object.keys(SIZES)) {
    const bytes = await Deno.readFile(new URL(name, DIR));
    const full = readImageHeader(bytes)!;
    for (let n = 0; n < Math.min(bytes.length, 4096); n++) {
      const cut = readImageHeader(bytes.subarray(0, n));
      // A GIF cut before its first frame keeps the screen size (Pillow would fail to load it).
      if (cut !== null && full.mime !== "image/gif") assert.deepEqual(cut, full, `${name}[:${n}]`);
    }
  }
});

Deno.test("image header: other bytes are no image", () => {
  const text = new TextEncoder().encode("<svg xmlns='http://www.w3.org/2000/svg'/>");
  assert.equal(readImageHeader(text), null);
  assert.equal(readImageHeader(new Uint8Array()), null);
  // A PNG signature without IHDR, a JPEG whose scan starts before any frame header.
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
  assert.equal(readImageHeader(new Uint8Array([...png, ...new Uint8Array(12)])), null);
  assert.equal(readImageHeader(new Uint8Array([0xff, 0xd8, 0xff, 0xda, 0, 2, 0, 0])), null);
  // A size of zero is no image either.
  const gif = new Uint8Array([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0, 0, 2, 0, 0, 0, 0, 0x3b]);
  assert.equal(readImageHeader(gif), null);
});
