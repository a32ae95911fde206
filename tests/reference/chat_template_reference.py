#!/usr/bin/env python3
"""Reference chat-template renderer backed by Hugging Face ``transformers``.

Test-only helper used to cross-check rollgate's TypeScript chat-template rendering.

Usage::

    .venv/bin/python tests/reference/chat_template_reference.py MODEL_DIR < cases.jsonl

``MODEL_DIR`` must contain ``tokenizer.json`` and ``tokenizer_config.json``. The tokenizer is
loaded once, strictly offline. Each stdin line is a JSON object::

    {"messages": [...], "tools": [...] | null, "add_generation_prompt": bool, "kwargs": {...}}

and produces exactly one stdout line, in order::

    {"ids": [int, ...], "text": "..."}   on success
    {"error": "ExceptionType: message"}  when the line is malformed or the template raises

Blank input lines are skipped. Anything libraries print is diverted to stderr so stdout
carries only the JSON Lines protocol. Exit status is non-zero only when the tokenizer cannot
be loaded or the command line is wrong.
"""

import os

# Must be set before transformers / huggingface_hub are imported.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import json  # noqa: E402
import sys  # noqa: E402
from collections.abc import Mapping  # noqa: E402

# Keys the script controls itself; a case may not override them through "kwargs".
RESERVED_KWARGS = frozenset(
    {"conversation", "tools", "add_generation_prompt", "tokenize", "return_dict", "return_tensors"}
)


def to_id_list(result):
    """Normalise ``apply_chat_template(..., tokenize=True)`` output to a plain ``list[int]``.

    Depending on the transformers version (and ``return_dict``) this is a ``list[int]``, a
    ``BatchEncoding``/dict holding ``input_ids``, a batched ``list[list[int]]``, or a tensor /
    numpy array.
    """
    if isinstance(result, Mapping) or hasattr(result, "input_ids"):
        result = result["input_ids"]
    if hasattr(result, "tolist"):
        result = result.tolist()
    result = list(result)
    if len(result) > 0 and isinstance(result[0], (list, tuple)):
        if len(result) != 1:
            raise TypeError(f"expected a single sequence of ids, got a batch of {len(result)}")
        result = list(result[0])
    return [int(i) for i in result]


def render(tok, case):
    """Render one case; returns the success object or raises."""
    if not isinstance(case, dict):
        raise TypeError("each input line must be a JSON object")
    messages = case.get("messages")
    if not isinstance(messages, list):
        raise TypeError('"messages" must be an array')
    tools = case.get("tools")
    if tools is not None and not isinstance(tools, list):
        raise TypeError('"tools" must be an array or null')
    add_generation_prompt = case.get("add_generation_prompt", False)
    if not isinstance(add_generation_prompt, bool):
        raise TypeError('"add_generation_prompt" must be a boolean')
    kwargs = case.get("kwargs") or {}
    if not isinstance(kwargs, dict):
        raise TypeError('"kwargs" must be an object')
    clashes = sorted(RESERVED_KWARGS.intersection(kwargs))
    if clashes:
        raise ValueError(f"kwargs may not override: {', '.join(clashes)}")

    common = dict(tools=tools, add_generation_prompt=add_generation_prompt, **kwargs)
    text = tok.apply_chat_template(messages, tokenize=False, **common)
    ids = tok.apply_chat_template(messages, tokenize=True, **common)
    return {"ids": to_id_list(ids), "text": text}


def main(argv):
    if len(argv) != 2:
        print(f"usage: {argv[0]} MODEL_DIR < cases.jsonl", file=sys.stderr)
        return 2
    model_dir = argv[1]
    if not os.path.isdir(model_dir):
        print(f"model directory not found: {model_dir!r}", file=sys.stderr)
        return 1

    # Keep the protocol channel clean: whatever libraries print goes to stderr.
    out = sys.stdout
    out.reconfigure(encoding="utf-8", newline="\n")
    sys.stdin.reconfigure(encoding="utf-8")
    sys.stdout = sys.stderr

    from transformers import AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    except Exception as exc:  # noqa: BLE001 - report any load failure and exit
        print(f"failed to load tokenizer from {model_dir!r}: {exc!r}", file=sys.stderr)
        return 1

    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            result = render(tok, json.loads(line))
        except Exception as exc:  # noqa: BLE001 - template errors are data, not crashes
            result = {"error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(result) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
