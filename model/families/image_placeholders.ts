/**
 * Images in a vision family's prompt: written in place of each image part as `start` + one `pad`
 * per image token + `end` (`VisionPlaceholder`), and found again in the rendered ids, so a turn
 * knows where each image's tokens lie (the span of its pads: what a trainer fills with the vision
 * encoder's output).
 *
 * @module
 */
import type { ContentImage, ImageRef, Message } from "../../canonical/mod.ts";
import type { TemplateMessage } from "../template_input.ts";
import type { ImageSize, VisionPlaceholder } from "./family.ts";

/** Where one image's pad tokens lie in rendered ids (half-open). */
export interface ImageSpan {
  start: number;
  end: number;
}

/** A vision placeholder's token ids. */
export interface VisionIds {
  start: number;
  pad: number;
  end: number;
}

/** The pad count of an image; an error when the family does not count images or refuses it. */
export function imageTokens(vision: VisionPlaceholder | undefined, image: ImageSize): number {
  const count = vision?.tokens?.(image);
  if (count === undefined) throw new Error("this model family does not render images");
  if (typeof count !== "number") throw new Error(`an image is refused: ${count.refused}`);
  return count;
}

/** One image's placeholder: start, a pad per image token, end. */
export function imagePlaceholder(vision: VisionPlaceholder, image: ImageSize): string {
  return vision.start + vision.pad.repeat(imageTokens(vision, image)) + vision.end;
}

/**
 * User or tool content with its images' placeholders at their places; `text` writes each text
 * segment between them (Gemma trims each, as its template trims each text part).
 */
export function contentWithImages(
  m: TemplateMessage,
  vision: VisionPlaceholder,
  text: (segment: string) => string = (segment) => segment,
): string {
  if (!m.images?.length) return text(m.content);
  let out = "", from = 0;
  for (const { at, image } of m.images) {
    out += text(m.content.slice(from, at)) + imagePlaceholder(vision, image);
    from = at;
  }
  return out + text(m.content.slice(from));
}

/** The images of `messages` in order (what a render writes, in this order). */
export function imagesOf(messages: readonly Message[]): ImageRef[] {
  const out: ImageRef[] = [];
  for (const m of messages) {
    if (m.role === "user" || m.role === "tool") {
      for (const { image } of m.images ?? [] as ContentImage[]) out.push(image);
    }
  }
  return out;
}

/**
 * The pad spans of `counts.length` images in `ids`, in order: each a `start` id, exactly
 * `counts[k]` pads, an `end` id. A `start` id at one of `skip` (special-token text in content
 * that the tokenizer read as a control token) is not an image. Throws when the render does not
 * hold the images as counted.
 */
export function findImageSpans(
  ids: readonly number[],
  vision: VisionIds,
  counts: readonly number[],
  skip: ReadonlySet<number>,
): ImageSpan[] {
  const spans: ImageSpan[] = [];
  for (let i = 0; i < ids.length && spans.length < counts.length; i++) {
    if (ids[i] !== vision.start || skip.has(i)) continue;
    const want = counts[spans.length];
    let j = i + 1;
    while (j < ids.length && ids[j] === vision.pad) j++;
    if (j - i - 1 !== want || ids[j] !== vision.end) {
      throw new Error(
        `image ${spans.length + 1}: the render holds ${j - i - 1} image tokens where ${want} ` +
          "were counted",
      );
    }
    spans.push({ start: i + 1, end: j });
    i = j;
  }
  if (spans.length !== counts.length) {
    throw new Error(`the render holds ${spans.length} of ${counts.length} images`);
  }
  return spans;
}
