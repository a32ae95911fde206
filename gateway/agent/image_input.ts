/**
 * Images as agents send them (base64 data, `data:` URLs) → canonical image parts, for every wire
 * protocol: the bytes are decoded once, their size read from the header (`readImageHeader`, no
 * pixel decoded) and their sha256 taken; the message keeps only that (`ImageRef`), the request
 * keeps the bytes by hash until the turn has stored them. A remote image (an `http(s)` URL, a
 * provider's file id) is refused, never fetched: the gateway does not reach out on an agent's
 * behalf, and the image would not be the same bytes at training time.
 *
 * Content with images: text parts joined as each protocol joins them (a newline between two text
 * parts), an image part stands where it is, adding no text (templates write a content list's
 * parts back to back).
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { ContentImage, ImageRef, RequestImage } from "../../canonical/mod.ts";
import { readImageHeader } from "../../canonical/mod.ts";
import { InvalidRequestError } from "../protocol.ts";

const DATA_URL = /^data:([^,;]*)((?:;[^,;]*)*?);base64,/i;

/** `Uint8Array.fromBase64` (TC39, in Deno's V8), which TypeScript's library does not name yet. */
const fromBase64 = (Uint8Array as unknown as { fromBase64(text: string): Uint8Array }).fromBase64;

/** A part of content: its text, or an image. */
export type ContentPart = string | ImageRef;

/** One request's images: each part's reference, and each image once by hash for the store. */
export class RequestImages {
  readonly byHash = new Map<string, RequestImage>();

  /** Base64 image data (`where` names the field in errors, `messages[2].content[0]`). */
  fromBase64(data: string, where: string): ImageRef {
    let bytes: Uint8Array;
    try {
      bytes = fromBase64(data); // strict: a character outside the alphabet throws
    } catch {
      throw new InvalidRequestError(`${where}: the image data is not base64`);
    }
    return this.#add(bytes, where);
  }

  /** An image URL: a `data:` URL with base64 data; any other URL is refused. */
  fromUrl(url: string, where: string): ImageRef {
    const data = DATA_URL.exec(url);
    if (data) return this.fromBase64(url.slice(data[0].length), where);
    throw remoteImage(where, url.startsWith("data:") ? "a data: URL without base64" : url);
  }

  /** Content parts in order, with each image where it stands. */
  content(parts: readonly ContentPart[]): { content: string; images?: ContentImage[] } {
    let content = "", text = false;
    const images: ContentImage[] = [];
    for (const part of parts) {
      if (typeof part === "string") {
        content += (text ? "\n" : "") + part;
        text = true;
      } else {
        images.push({ at: content.length, image: part });
        text = false;
      }
    }
    return images.length ? { content, images } : { content };
  }

  #add(bytes: Uint8Array, where: string): ImageRef {
    const header = readImageHeader(bytes);
    if (!header) {
      throw new InvalidRequestError(
        `${where}: not a PNG, JPEG, GIF or WebP image (its header gives no size)`,
      );
    }
    const hash = createHash("sha256").update(bytes).digest("hex");
    const known = this.byHash.get(hash);
    if (known) return known.ref;
    const ref = { hash, ...header };
    this.byHash.set(hash, { ref, bytes });
    return ref;
  }
}

/** The refusal of an image the gateway would have to fetch. */
export function remoteImage(where: string, source: string): InvalidRequestError {
  const shown = source.length > 80 ? source.slice(0, 77) + "..." : source;
  return new InvalidRequestError(
    `${where}: the gateway does not fetch remote images (${shown}); send the image inline, ` +
      "as base64 data",
  );
}
