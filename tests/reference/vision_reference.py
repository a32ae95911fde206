#!/usr/bin/env python3
"""A vision family's image processing as `transformers` does it, for cross-checking rollgate's
image turns (test-only). Runs in the engine venv (`.venv-engine`: transformers 5.19, torch,
torchvision, Pillow, renderers 0.1.12), offline:

    .venv-engine/bin/python tests/reference/vision_reference.py MODEL_DIR FAMILY < cases.jsonl

``FAMILY`` is ``qwen3-vl`` or ``gemma4``. ``MODEL_DIR`` holds the tokenizer files and the
processor settings the test wrote from the published values: for ``qwen3-vl``
``preprocessor_config.json`` and ``video_preprocessor_config.json``, from which ``AutoProcessor``
builds ``Qwen3VLProcessor``; for ``gemma4`` ``processor_config.json``, whose ``image_processor``
builds ``Gemma4ImageProcessor`` and with it a ``Gemma4Processor`` (the tokenizer double is given
the image and audio token names Gemma's tokenizer carries). Each stdin line is one of::

    {"op": "count", "sizes": [[height, width], ...]}
        -> {"tokens": [...]}: the count from the size alone, by the processor's own resize
           (Qwen: ``get_number_of_image_patches`` // merge²; Gemma:
           ``get_aspect_ratio_preserving_size``, patches // pooling²)
    {"op": "process", "paths": [...]}
        -> {"tokens": [...], "sizes": [[height, width], ...]}: each file opened with Pillow and run
           through the image processor itself (``image_grid_thw``, ``num_soft_tokens_per_image``)
    {"op": "expand", "text": "...", "paths": [...]}
        -> {"ids": [...]}: the processor called with the text and the images: each image token of
           the text (``<|image_pad|>``; Gemma's ``<|image|>``) expanded to the image's tokens, then
           tokenized
    {"op": "render", "messages": [...], "tools": [...] | null, "add_generation_prompt": bool}
        -> {"ids": [...], "images": [[offset, length], ...]}: renderers' renderer of the family
           with the processor (image parts as ``{"type": "image", "image": PATH}``)

or ``{"error": "..."}``, one line per case in order.
"""

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import json  # noqa: E402
import sys  # noqa: E402


def load(path):
    from PIL import Image

    with Image.open(path) as image:
        return image.convert("RGB")


class Qwen:
    def __init__(self, model_dir):
        from renderers.qwen3_vl import Qwen3VLRenderer
        from transformers import AutoProcessor

        self.processor = AutoProcessor.from_pretrained(model_dir)
        self.renderer = Qwen3VLRenderer(self.processor.tokenizer, processor=self.processor)
        self.merge = self.processor.image_processor.merge_size**2

    def count(self, h, w):
        return self.processor.image_processor.get_number_of_image_patches(h, w, {}) // self.merge

    def tokens(self, images):
        grids = self.processor.image_processor(images=images, return_tensors="np")["image_grid_thw"]
        return [int(g.prod()) // self.merge for g in grids]

    def expand(self, text, images):
        return self.processor(text=[text], images=images or None, return_tensors="np")["input_ids"][0]


class Gemma:
    def __init__(self, model_dir):
        from types import SimpleNamespace

        from renderers import create_renderer
        from renderers.configs import _config_class_for
        from transformers import AutoTokenizer
        from transformers.models.gemma4.feature_extraction_gemma4 import Gemma4AudioFeatureExtractor
        from transformers.models.gemma4.image_processing_gemma4 import Gemma4ImageProcessor
        from transformers.models.gemma4.processing_gemma4 import Gemma4Processor
        from transformers.models.gemma4.video_processing_gemma4 import Gemma4VideoProcessor

        with open(os.path.join(model_dir, "processor_config.json")) as f:
            settings = json.load(f)
        tok = AutoTokenizer.from_pretrained(model_dir)
        names = {"image_token": "<|image|>", "boi_token": "<|image>", "eoi_token": "<image|>",
                 "audio_token": "<|audio|>", "boa_token": "<|audio>", "eoa_token": "<audio|>"}
        for key, value in names.items():
            setattr(tok, key, value)
        tok.image_token_id = tok.convert_tokens_to_ids("<|image|>")
        image = {k: v for k, v in settings["image_processor"].items() if k != "image_processor_type"}
        self.image_processor = Gemma4ImageProcessor(**image)
        self.processor = Gemma4Processor(
            feature_extractor=Gemma4AudioFeatureExtractor(),
            image_processor=self.image_processor,
            tokenizer=tok,
            video_processor=Gemma4VideoProcessor(),
            image_seq_length=settings["image_seq_length"],
        )
        self.renderer = create_renderer(tok, _config_class_for("gemma4")())
        self.renderer._processor = SimpleNamespace(image_processor=self.image_processor)

    def count(self, h, w):
        from transformers.models.gemma4.image_processing_gemma4 import (
            get_aspect_ratio_preserving_size,
        )

        p, k = self.image_processor.patch_size, self.image_processor.pooling_kernel_size
        max_patches = self.image_processor.max_soft_tokens * k**2
        th, tw = get_aspect_ratio_preserving_size(h, w, p, max_patches, k)
        return (th // p) * (tw // p) // k**2

    def tokens(self, images):
        out = self.image_processor(images=images, return_tensors="np")
        return [int(n) for n in out["num_soft_tokens_per_image"]]

    def expand(self, text, images):
        out = self.processor(text=[text], images=[images] if images else None, return_tensors="np")
        return out["input_ids"][0]


def run(family, case):
    op = case["op"]
    if op == "count":
        return {"tokens": [family.count(h, w) for h, w in case["sizes"]]}
    if op == "process":
        images = [load(p) for p in case["paths"]]
        return {"tokens": family.tokens(images), "sizes": [[i.height, i.width] for i in images]}
    if op == "expand":
        ids = family.expand(case["text"], [load(p) for p in case["paths"]])
        return {"ids": [int(i) for i in ids]}
    if op == "render":
        rendered = family.renderer.render(
            case["messages"],
            tools=case.get("tools"),
            add_generation_prompt=case["add_generation_prompt"],
        )
        mm = rendered.multi_modal_data
        spans = mm.mm_placeholders.get("image", []) if mm else []
        return {"ids": rendered.token_ids, "images": [[p.offset, p.length] for p in spans]}
    raise ValueError(f"unknown op {op!r}")


def main():
    family = {"qwen3-vl": Qwen, "gemma4": Gemma}[sys.argv[2]](sys.argv[1])
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            result = run(family, json.loads(line))
        except Exception as e:  # noqa: BLE001 — reported per case
            result = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
