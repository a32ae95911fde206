#!/usr/bin/env python3
"""Qwen3-VL's image processing as `transformers` does it, for cross-checking rollgate's image
turns (test-only). Runs in the engine venv (`.venv-engine`: transformers 5.19, torch,
torchvision, Pillow, renderers 0.1.12), offline:

    .venv-engine/bin/python tests/reference/qwen3_vl_images_reference.py MODEL_DIR < cases.jsonl

``MODEL_DIR`` holds the tokenizer files and ``preprocessor_config.json`` /
``video_preprocessor_config.json`` (the published Qwen3-VL values, written by the test);
``AutoProcessor`` builds ``Qwen3VLProcessor`` from them. Each stdin line is one of::

    {"op": "count", "sizes": [[height, width], ...]}
        -> {"tokens": [...]}: the image processor's ``get_number_of_image_patches`` // merge²
    {"op": "process", "paths": [...]}
        -> {"tokens": [...], "sizes": [[height, width], ...]}: each file opened with Pillow and run
           through the image processor itself (``image_grid_thw``)
    {"op": "expand", "text": "...", "paths": [...]}
        -> {"ids": [...]}: ``Qwen3VLProcessor(text=..., images=...)``: each ``<|image_pad|>`` of
           the text expanded to the image's count, then tokenized
    {"op": "render", "messages": [...], "tools": [...] | null, "add_generation_prompt": bool}
        -> {"ids": [...], "images": [[offset, length], ...]}: renderers' ``Qwen3VLRenderer`` with
           the processor (image parts as ``{"type": "image", "image": PATH}``)

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


def run(processor, renderer, case):
    op = case["op"]
    image_processor = processor.image_processor
    merge = image_processor.merge_size**2
    if op == "count":
        return {
            "tokens": [
                image_processor.get_number_of_image_patches(h, w, {}) // merge
                for h, w in case["sizes"]
            ]
        }
    if op == "process":
        images = [load(p) for p in case["paths"]]
        grids = image_processor(images=images, return_tensors="np")["image_grid_thw"]
        return {
            "tokens": [int(g.prod()) // merge for g in grids],
            "sizes": [[i.height, i.width] for i in images],
        }
    if op == "expand":
        images = [load(p) for p in case["paths"]] or None
        out = processor(text=[case["text"]], images=images, return_tensors="np")
        return {"ids": [int(i) for i in out["input_ids"][0]]}
    if op == "render":
        rendered = renderer.render(
            case["messages"],
            tools=case.get("tools"),
            add_generation_prompt=case["add_generation_prompt"],
        )
        mm = rendered.multi_modal_data
        spans = mm.mm_placeholders.get("image", []) if mm else []
        return {"ids": rendered.token_ids, "images": [[p.offset, p.length] for p in spans]}
    raise ValueError(f"unknown op {op!r}")


def main():
    from renderers.qwen3_vl import Qwen3VLRenderer
    from transformers import AutoProcessor

    processor = AutoProcessor.from_pretrained(sys.argv[1])
    renderer = Qwen3VLRenderer(processor.tokenizer, processor=processor)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            result = run(processor, renderer, json.loads(line))
        except Exception as e:  # noqa: BLE001 — reported per case
            result = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
