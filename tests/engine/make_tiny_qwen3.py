"""Writes a tiny random-weight Qwen3 in Hugging Face layout, for a real vLLM to serve on CPU.

    python make_tiny_qwen3.py OUT_DIR TOKENIZER_DIR [--seed N] [--greedy-stop]

No hub and no torch: the tensors are drawn with numpy from a fixed seed and saved with
`safetensors`, under the names `Qwen3ForCausalLM` loads (tied embeddings); the tokenizer files are
copied from TOKENIZER_DIR (the bundled Qwen3 `tokenizer.json` / `tokenizer_config.json`), so the
model speaks the exact ids rollgate renders. Shape: hidden 128, 2 layers, 4 heads / 2 KV heads,
head_dim 64 (vLLM's CPU attention refuses 16), ~20M parameters, 79 MB in float32.

The same seed gives the same bytes, so a test can cache the directory by its arguments.

`--greedy-stop` makes a model that answers greedy decoding (temperature 0) of any prompt with
`Hi<|im_end|>` (a stop finish) and still samples at random at temperature 1: the embeddings of
`\n` (the generation prompt's last id) and `Hi` are scaled so each dominates its position's
residual stream, and an untied output layer adds to the logit of `Hi` after `\n` (+4: first under
argmax, p ≈ 4e-4 at temperature 1 against 151k random logits) and to the logit of `<|im_end|>`
after `Hi` (+30: p ≈ 1).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil

import numpy as np
from safetensors.numpy import save_file

HIDDEN, LAYERS, HEADS, KV_HEADS, HEAD_DIM, INTERMEDIATE = 128, 2, 4, 2, 64, 384
VOCAB = 151936  # Qwen3's embedding rows (the tokenizer's ids are all below it)
IM_END, ENDOFTEXT = 151645, 151643
NEWLINE, HI = 198, 13048  # "\n" ends `<|im_start|>assistant\n`; "Hi" is one id


def tensors(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)

    def normal(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float32)

    def ones(n: int) -> np.ndarray:
        return np.ones(n, np.float32)

    out = {"model.embed_tokens.weight": normal(VOCAB, HIDDEN), "model.norm.weight": ones(HIDDEN)}
    for layer in range(LAYERS):
        p = f"model.layers.{layer}."
        out[p + "input_layernorm.weight"] = ones(HIDDEN)
        out[p + "post_attention_layernorm.weight"] = ones(HIDDEN)
        out[p + "self_attn.q_proj.weight"] = normal(HEADS * HEAD_DIM, HIDDEN)
        out[p + "self_attn.k_proj.weight"] = normal(KV_HEADS * HEAD_DIM, HIDDEN)
        out[p + "self_attn.v_proj.weight"] = normal(KV_HEADS * HEAD_DIM, HIDDEN)
        out[p + "self_attn.o_proj.weight"] = normal(HIDDEN, HEADS * HEAD_DIM)
        out[p + "self_attn.q_norm.weight"] = ones(HEAD_DIM)
        out[p + "self_attn.k_norm.weight"] = ones(HEAD_DIM)
        out[p + "mlp.gate_proj.weight"] = normal(INTERMEDIATE, HIDDEN)
        out[p + "mlp.up_proj.weight"] = normal(INTERMEDIATE, HIDDEN)
        out[p + "mlp.down_proj.weight"] = normal(HIDDEN, INTERMEDIATE)
    return out


def greedy_stop(weights: dict[str, np.ndarray]) -> None:
    """The `--greedy-stop` rule (module doc): bigrams `\n` → `Hi` (greedy only) → `<|im_end|>`."""
    embed = weights["model.embed_tokens.weight"]
    head = embed.copy()
    embed[NEWLINE] *= 100
    embed[HI] *= 100
    # The final norm makes a position's state √HIDDEN long, along its dominant embedding.
    scale = 1 / np.sqrt(HIDDEN)
    head[HI] += 4 * scale * embed[NEWLINE] / np.linalg.norm(embed[NEWLINE])
    head[IM_END] += 30 * scale * embed[HI] / np.linalg.norm(embed[HI])
    weights["lm_head.weight"] = head


def config(tied: bool = True) -> dict:
    return {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "hidden_size": HIDDEN,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS,
        "head_dim": HEAD_DIM,
        "intermediate_size": INTERMEDIATE,
        "vocab_size": VOCAB,
        "max_position_embeddings": 40960,
        "rms_norm_eps": 1e-6,
        "rope_theta": 1000000.0,
        "tie_word_embeddings": tied,
        "torch_dtype": "float32",
        "hidden_act": "silu",
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": ENDOFTEXT,
        "eos_token_id": IM_END,
        "use_sliding_window": False,
        "sliding_window": None,
        "max_window_layers": LAYERS,
    }


def write(out: str, tokenizer_dir: str, seed: int, stop: bool = False) -> None:
    os.makedirs(out, exist_ok=True)
    weights = tensors(seed)
    if stop:
        greedy_stop(weights)
    save_file(weights, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(config(tied=not stop), f, indent=1)
    with open(os.path.join(out, "generation_config.json"), "w") as f:
        json.dump({"bos_token_id": ENDOFTEXT, "eos_token_id": [IM_END, ENDOFTEXT]}, f, indent=1)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(tokenizer_dir, name), os.path.join(out, name))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("tokenizer_dir")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--greedy-stop", action="store_true", help="greedy decoding answers Hi<|im_end|>")
    a = p.parse_args()
    write(a.out, a.tokenizer_dir, a.seed, a.greedy_stop)


if __name__ == "__main__":
    main()
