/**
 * Gemma 4 image turns against `transformers`' `Gemma4ImageProcessor` (and a `Gemma4Processor`
 * over the tokenizer double) and `renderers`' `Gemma4Renderer` over it (`vision_check.ts`), with
 * Gemma 4's published processor settings (280 soft tokens at most): every image is resized into
 * the patch budget, up or down, so thin images take the rounding-to-nothing branches and nothing
 * positive is refused.
 */
import { gemma4ModelDir } from "../support/vision_models.ts";
import { registerVisionChecks } from "./vision_check.ts";

registerVisionChecks({
  family: "gemma4",
  modelDir: () => gemma4ModelDir(),
  sizes: [[1, 5000], [3, 4000], [10000, 7], [2, 3], [47, 48], [1, 100000]],
  refused: { sizes: [], pattern: /resizes to/ },
  onePerImage: (text) => text.replace(/<\|image>(<\|image\|>)+<image\|>/g, "<|image|>"),
});
