/**
 * Qwen3-VL image turns against `transformers`' `Qwen3VLProcessor` and `renderers`'
 * `Qwen3VLRenderer` over it (`vision_check.ts`), with Qwen3-VL Instruct's published processor
 * settings: the processor refuses an aspect ratio over 200.
 */
import { qwen3VlModelDir } from "../support/vision_models.ts";
import { registerVisionChecks } from "./vision_check.ts";

registerVisionChecks({
  family: "qwen3-vl",
  modelDir: () => qwen3VlModelDir(),
  sizes: [[10000, 60], [60, 11999]],
  refused: { sizes: [[1, 201], [5000, 24]], pattern: /aspect ratio/ },
  onePerImage: (text) => text.replace(/(<\|image_pad\|>)+/g, "<|image_pad|>"),
});
