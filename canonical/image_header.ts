/**
 * An image's format and size from its header, without decoding a pixel: PNG, JPEG, GIF and WebP,
 * the formats agents send (Anthropic accepts these four; so do OpenAI and Gemini). The size is the
 * one Pillow reports when it opens the file (what a Hugging Face processor resizes from): PNG's
 * `IHDR`, JPEG's start-of-frame (no EXIF rotation), GIF's screen grown to its first frame's extent,
 * WebP's `VP8 ` frame, `VP8L` header or `VP8X` canvas.
 *
 * @module
 */
import type { ImageMime } from "./messages.ts";

/** What a header says. */
export interface ImageHeader {
  mime: ImageMime;
  width: number;
  height: number;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * The format and size of an image, or null when `bytes` is none of the four formats or its
 * header is cut short or holds no size.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * // A GIF's first 10 bytes: signature, screen width 3 and height 2 (little-endian).
 * const gif = new Uint8Array([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 3, 0, 2, 0, 0, 0, 0, 0x3b]);
 * assert.deepEqual(readImageHeader(gif), { mime: "image/gif", width: 3, height: 2 });
 * assert.equal(readImageHeader(new Uint8Array([1, 2, 3])), null);
 * ```
 */
export function readImageHeader(bytes: Uint8Array): ImageHeader | null {
  const header = sniff(bytes);
  return header && header.width > 0 && header.height > 0 ? header : null;
}

function sniff(b: Uint8Array): ImageHeader | null {
  if (PNG_SIGNATURE.every((v, i) => b[i] === v)) return png(b);
  if (b[0] === 0xff && b[1] === 0xd8) return jpeg(b);
  if (ascii(b, 0, 4) === "GIF8") return gif(b);
  if (ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 4) === "WEBP") return webp(b);
  return null;
}

function ascii(b: Uint8Array, at: number, n: number): string {
  return at + n > b.length ? "" : String.fromCharCode(...b.subarray(at, at + n));
}

const be16 = (b: Uint8Array, i: number) => (b[i] << 8) | b[i + 1];
const le16 = (b: Uint8Array, i: number) => b[i] | (b[i + 1] << 8);
const le24 = (b: Uint8Array, i: number) => b[i] | (b[i + 1] << 8) | (b[i + 2] << 16);
const be32 = (b: Uint8Array, i: number) => ((b[i] << 24) >>> 0) + (b[i + 1] << 16) + be16(b, i + 2);

function png(b: Uint8Array): ImageHeader | null {
  if (b.length < 24 || ascii(b, 12, 4) !== "IHDR") return null;
  return { mime: "image/png", width: be32(b, 16), height: be32(b, 20) };
}

/** Markers that stand alone (no length): TEM, RST0–7, SOI. */
function standalone(marker: number): boolean {
  return marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8);
}

/** Start-of-frame markers: every SOFn but DHT (C4), JPG (C8) and DAC (CC). */
function startOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 &&
    marker !== 0xcc;
}

/** Walks the segments up to the first start of frame; scan data (SOS) before one is no image. */
function jpeg(b: Uint8Array): ImageHeader | null {
  let i = 2;
  while (i + 1 < b.length) {
    if (b[i] !== 0xff) return null;
    const marker = b[i + 1];
    if (marker === 0xff) { // fill byte
      i++;
      continue;
    }
    if (standalone(marker)) {
      i += 2;
      continue;
    }
    if (i + 4 > b.length) return null;
    const length = be16(b, i + 2);
    if (length < 2) return null;
    if (startOfFrame(marker)) {
      if (i + 9 > b.length) return null;
      return { mime: "image/jpeg", width: be16(b, i + 7), height: be16(b, i + 5) };
    }
    if (marker === 0xda || marker === 0xd9) return null;
    i += 2 + length;
  }
  return null;
}

/**
 * The logical screen, grown to the first frame's extent as Pillow grows it: the blocks before the
 * first image descriptor are skipped (the global color table, extensions).
 */
function gif(b: Uint8Array): ImageHeader | null {
  if (b.length < 10 || (ascii(b, 0, 6) !== "GIF87a" && ascii(b, 0, 6) !== "GIF89a")) return null;
  let width = le16(b, 6), height = le16(b, 8);
  let i = 13;
  if (b[10] & 0x80) i += 3 << ((b[10] & 0x07) + 1);
  while (i < b.length) {
    if (b[i] === 0x2c) { // image descriptor: left, top, width, height
      if (i + 9 > b.length) break;
      width = Math.max(width, le16(b, i + 1) + le16(b, i + 5));
      height = Math.max(height, le16(b, i + 3) + le16(b, i + 7));
      break;
    }
    if (b[i] !== 0x21) break; // the trailer, or something Pillow stops at too
    i += 2; // introducer and label, then sub-blocks up to an empty one
    while (i < b.length && b[i] !== 0) i += b[i] + 1;
    i++;
  }
  return { mime: "image/gif", width, height };
}

function webp(b: Uint8Array): ImageHeader | null {
  const chunk = ascii(b, 12, 4);
  if (chunk === "VP8 ") {
    // A key frame's tag (3 bytes) and start code, then 14-bit width and height.
    if (b.length < 30 || b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a) return null;
    return { mime: "image/webp", width: le16(b, 26) & 0x3fff, height: le16(b, 28) & 0x3fff };
  }
  if (chunk === "VP8L") {
    // The signature byte, then width − 1 and height − 1 in 14 bits each, least significant first.
    if (b.length < 25 || b[20] !== 0x2f) return null;
    const bits = b[21] | (b[22] << 8) | (b[23] << 16) | (b[24] << 24);
    return { mime: "image/webp", width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === "VP8X") {
    // Flags and 3 reserved bytes, then the canvas's width − 1 and height − 1 in 24 bits each.
    if (b.length < 30) return null;
    return { mime: "image/webp", width: le24(b, 24) + 1, height: le24(b, 27) + 1 };
  }
  return null;
}
