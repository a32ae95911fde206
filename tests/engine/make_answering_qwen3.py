"""Writes the tiny Qwen3 of `make_tiny_qwen3.py` made to answer greedy decoding with fixed ids.

    python make_answering_qwen3.py OUT_DIR TOKENIZER_DIR --answer 785,4226,13,151645 [--seed N]

The answer is a chain of bigrams from `\n` (198, the last id of Qwen3's generation prompt
`<|im_start|>assistant\n`): each id of the chain gets its embedding scaled so it dominates its
position's residual stream, and an untied output layer adds `--margin` (default 8) to the logit of
the next id of the chain after it. Greedy decoding (temperature 0) of any prompt then gives the
answer; the logprobs stay those of a real model (about -4 at margin 8, not 0), so an engine's
recompute of them means something. The ids must be distinct (a bigram has one successor).

The same arguments give the same bytes, so a test can cache the directory by them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil

import numpy as np
from safetensors.numpy import save_file

from make_tiny_qwen3 import HIDDEN, config, tensors

NEWLINE = 198


def answering(weights: dict[str, np.ndarray], answer: list[int], margin: float) -> None:
    chain = [NEWLINE, *answer]
    if len(set(chain)) != len(chain):
        raise SystemExit(f"the answer's ids must be distinct and not {NEWLINE}: {answer}")
    embed = weights["model.embed_tokens.weight"]
    head = embed.copy()
    for token in chain:
        embed[token] *= 100
    # The final norm makes a position's state √HIDDEN long, along its dominant embedding.
    scale = 1 / np.sqrt(HIDDEN)
    for token, successor in zip(chain, chain[1:]):
        head[successor] += margin * scale * embed[token] / np.linalg.norm(embed[token])
    weights["lm_head.weight"] = head


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("tokenizer_dir")
    p.add_argument("--answer", required=True, help="comma-separated ids")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--margin", type=float, default=8.0)
    a = p.parse_args()
    weights = tensors(a.seed)
    answering(weights, [int(t) for t in a.answer.split(",")], a.margin)
    os.makedirs(a.out, exist_ok=True)
    save_file(weights, os.path.join(a.out, "model.safetensors"), metadata={"format": "pt"})
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump({**config(), "tie_word_embeddings": False}, f, indent=1)
    with open(os.path.join(a.out, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": 151643, "eos_token_id": [151645, 151643]}, f, indent=1)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(a.tokenizer_dir, name), os.path.join(a.out, name))


if __name__ == "__main__":
    main()
