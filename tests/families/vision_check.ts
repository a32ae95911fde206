/**
 * A vision family's image turns against its `transformers` processor (5.19, in the engine venv,
 * with the model's published processor settings) and `renderers`' renderer over it, registered as
 * one `Deno.test` by `registerVisionChecks`:
 *
 * - counts: rollgate's resize rule and patch arithmetic give the processor's image token count
 *   for every size (rounding ties, tiny images, the pixel bounds, long thin images), and refuse
 *   what it refuses;
 * - files: each real image file, decoded by the processor, has the count rollgate computes from
 *   its header alone;
 * - prompts: conversations with images in user and tool content render to the ids the processor
 *   gives when it expands one image token per image in the same render's text, and to
 *   `renderers`' ids, with each image's pads where `renderers` places them.
 *
 * @module
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { AssistantMessage, ImageRef, Message, ToolSpec } from "../../canonical/mod.ts";
import { readImageHeader } from "../../canonical/mod.ts";
import { PolicyModel } from "../../model/policy_model.ts";
import { toTemplateTools } from "../../model/template_input.ts";
import { Rng } from "../invariants/conversation_generator.ts";
import { processorMissing, withVisionProcessor } from "../reference/vision_env.ts";
import { skipGroup } from "../support/skips.ts";

export interface VisionCheckOptions {
  family: "qwen3-vl" | "gemma4";
  /** Writes the model directory with its processor settings (removed after the test). */
  modelDir(): Promise<string>;
  /** Sizes `[height, width]` the family's rule takes beyond the common ones. */
  sizes: [number, number][];
  /** Sizes its processor refuses, and what the refusal says. */
  refused: { sizes: [number, number][]; pattern: RegExp };
  /** The render's text with each image's tokens as the one token the processor expands. */
  onePerImage(text: string): string;
}
const FIXTURES = decodeURIComponent(
  new URL("../../canonical/__fixtures__/images/", import.meta.url).pathname,
);
const FILES = [...Deno.readDirSync(FIXTURES)].map((e) => e.name).filter((n) => !n.endsWith(".json"))
  .sort();

/** Sizes that hit every branch of the resizes: ties, tiny, bounds, thin, huge. */
function sizes(extra: [number, number][]): [number, number][] {
  const out: [number, number][] = [
    [1, 1],
    [1, 200],
    [200, 1],
    [16, 16],
    [31, 33],
    [48, 48],
    [80, 112],
    [255, 257],
    [256, 256],
    [4096, 4096],
    [4097, 4096],
    [10000, 60],
    [60, 11999],
    [8000, 6000],
    [1080, 1920],
    [2160, 3840],
    ...extra,
  ];
  for (let k = 1; k <= 40; k++) out.push([32 * k + 16, 32 * (41 - k) + 16]); // halves: to even
  const rng = new Rng(35_002);
  while (out.length < 400 + extra.length) {
    const h = 1 + Math.floor(rng.next() * 6000), w = 1 + Math.floor(rng.next() * 6000);
    if (Math.max(h, w) / Math.min(h, w) <= 200) out.push([h, w]);
  }
  return out;
}

function imageRef(bytes: Uint8Array): ImageRef {
  const header = readImageHeader(bytes)!;
  return { hash: createHash("sha256").update(bytes).digest("hex"), ...header };
}

/** Registers the check of one vision family. */
export function registerVisionChecks(o: VisionCheckOptions): void {
  Deno.test({
    name: `${o.family} images: counts, files and prompts equal the transformers processor's`,
    ignore: skipGroup(`${o.family} images vs transformers`, processorMissing()),
    fn: () => check(o),
  });
}

async function check(o: VisionCheckOptions): Promise<void> {
  const dir = await o.modelDir();
  try {
    const model = await PolicyModel.load({ dir });
    assert.equal(model.format.family, o.family);
    const tokens = model.format.vision!.tokens!;

    // Counts, over sizes, and what is refused.
    const all = sizes(o.sizes);
    const refusedSizes = o.refused.sizes;
    const paths = FILES.map((f) => FIXTURES + f);
    const refs = new Map<string, ImageRef>();
    for (const f of FILES) refs.set(f, imageRef(await Deno.readFile(FIXTURES + f)));

    const conversations = conversationsWithImages([...refs.keys()]);
    const rendered = await Promise.all(conversations.map(async (c) => {
      const messages = c.messages(refs);
      const r = await model.renderFull(messages, c.tools);
      return { ...c, messages, r };
    }));

    const cases = [
      { op: "count" as const, sizes: all },
      ...refusedSizes.map((s) => ({ op: "count" as const, sizes: [s] })),
      { op: "process" as const, paths },
      ...rendered.map((c) => ({
        op: "render" as const,
        messages: c.reference(FIXTURES),
        tools: c.tools.length ? toTemplateTools(c.tools) : null,
        add_generation_prompt: true,
      })),
      ...rendered.map((c) => ({
        op: "expand" as const,
        text: o.onePerImage(c.r.text),
        paths: c.files.map((f) => FIXTURES + f),
      })),
    ];
    const results = await withVisionProcessor(dir, o.family, cases);
    let k = 0;

    const counted = results[k++];
    assert.deepEqual(all.map(([h, w]) => tokens({ width: w, height: h })), counted.tokens);
    for (const [h, w] of refusedSizes) {
      const reference = results[k++];
      assert.match(reference.error ?? "", o.refused.pattern, `${h}×${w}`);
      const ours = tokens({ width: w, height: h });
      assert.ok(typeof ours === "object" && o.refused.pattern.test(ours.refused), `${h}×${w}`);
    }

    const processed = results[k++];
    assert.deepEqual(
      FILES.map((f) => [refs.get(f)!.height, refs.get(f)!.width]),
      processed.sizes,
      "decoded sizes = header sizes",
    );
    assert.deepEqual(FILES.map((f) => tokens(refs.get(f)!)), processed.tokens);

    for (const c of rendered) {
      const reference = results[k++];
      assert.equal(reference.error, undefined, c.name);
      assert.deepEqual(c.r.ids, reference.ids, `${c.name}: ids = renderers' ids`);
      assert.deepEqual(
        c.r.images!.map((s) => [s.start, s.end - s.start]),
        reference.images,
        `${c.name}: image spans = renderers' placeholders`,
      );
    }
    for (const c of rendered) {
      const expanded = results[k++];
      assert.equal(expanded.error, undefined, c.name);
      assert.deepEqual(c.r.ids, expanded.ids, `${c.name}: ids = the processor's expansion`);
    }
    assert.equal(k, results.length);

    // Through a tool loop: the first turn's prompt, its answer as the policy writes it and the
    // delta of an image tool result are the full render, images where it puts them.
    for (const c of rendered) {
      const toolAt = c.messages.findIndex((m) => m.role === "tool");
      if (toolAt < 0) continue;
      const call = c.messages[toolAt - 1] as AssistantMessage;
      const first = await model.renderFull(c.messages.slice(0, toolAt - 1), c.tools);
      const output = await model.renderAnswerIds(call);
      const delta = await model.renderDeltaIds(c.messages.slice(toolAt), c.tools, {}, {
        toolCall: (id) => call.tool_calls!.find((t) => t.id === id),
      });
      const { bridgeIds, deltaIds } = await model.joinTurn(output, delta.ids);
      const joined = [...first.ids, ...output, ...bridgeIds, ...deltaIds];
      assert.deepEqual(joined, c.r.ids, `${c.name}: the delta-built prompt = the full render`);
      const at = joined.length - deltaIds.length - (delta.ids.length - deltaIds.length);
      assert.deepEqual(
        delta.images!.map((s) => [s.start + at, s.end + at]),
        c.r.images!.slice(-delta.images!.length).map((s) => [s.start, s.end]),
        `${c.name}: the delta's image spans`,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A conversation with image parts: ours (canonical) and as `renderers` is given it. */
interface ImageConversation {
  name: string;
  files: string[];
  tools: ToolSpec[];
  messages(refs: ReadonlyMap<string, ImageRef>): Message[];
  reference(dir: string): unknown[];
}

type Part = string | { file: string };

/** Canonical content: text parts back to back, each image where it stands. */
function canonical(parts: Part[], refs: ReadonlyMap<string, ImageRef>) {
  let content = "";
  const images = [];
  for (const p of parts) {
    if (typeof p === "string") content += p;
    else images.push({ at: content.length, image: refs.get(p.file)! });
  }
  return { content, images };
}

function referenceParts(parts: Part[], dir: string): unknown[] {
  return parts.map((p) =>
    typeof p === "string" ? { type: "text", text: p } : { type: "image", image: dir + p.file }
  );
}

function conversationsWithImages(files: string[]): ImageConversation[] {
  const tools: ToolSpec[] = [{
    name: "read",
    description: "Read a file",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
    kind: "function",
  }];
  const call = { id: "call_1", name: "read", arguments: '{"path": "shot.png"}' };
  const one = (user: Part[], tool: Part[] | null, withTools: boolean, name: string) => {
    const used = [...user, ...(tool ?? [])].flatMap((p) => typeof p === "string" ? [] : [p.file]);
    return {
      name,
      files: used,
      tools: withTools ? tools : [],
      messages(refs: ReadonlyMap<string, ImageRef>): Message[] {
        const out: Message[] = [
          { role: "system", content: "You look at pictures." },
          { role: "user", ...canonical(user, refs) },
        ];
        if (tool) {
          // A call without text: Gemma's history writes a call's text after its results (its
          // declared rewrite), which the delta check below would meet.
          out.push({ role: "assistant", content: "", tool_calls: [call] });
          out.push({ role: "tool", tool_call_id: call.id, ...canonical(tool, refs) });
        }
        return out;
      },
      reference(dir: string): unknown[] {
        const out: unknown[] = [
          { role: "system", content: "You look at pictures." },
          { role: "user", content: referenceParts(user, dir) },
        ];
        if (tool) {
          out.push({
            role: "assistant",
            content: "",
            tool_calls: [{
              id: call.id,
              type: "function",
              function: { name: call.name, arguments: call.arguments },
            }],
          });
          out.push({ role: "tool", tool_call_id: call.id, content: referenceParts(tool, dir) });
        }
        return out;
      },
    };
  };
  const f = (i: number) => ({ file: files[i % files.length] });
  const cases: ImageConversation[] = [
    one([f(0), "What is in this picture?"], null, false, "image first"),
    one(["Compare ", f(1), " with ", f(2), "."], null, false, "two images in text"),
    one(["Look at the screenshot."], [f(3)], true, "image in a tool result"),
    one(["Here:", f(4)], ["The file:\n", f(5), "\nend"], true, "user and tool images"),
  ];
  // Every fixture once, two to a conversation.
  for (let i = 0; i < files.length; i += 2) {
    cases.push(one([f(i), "and", f(i + 1)], null, i % 4 === 0, `files ${i}, ${i + 1}`));
  }
  return cases;
}
