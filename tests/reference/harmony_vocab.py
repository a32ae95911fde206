"""The o200k vocabulary file that ``openai-harmony`` (and ``tiktoken``) load, built locally.

``openai-harmony`` downloads ``o200k_base.tiktoken`` on first use and fails offline. Its binary
reads the file from the directory ``TIKTOKEN_ENCODINGS_BASE`` names (cache:
``TIKTOKEN_RS_CACHE_DIR``) and expects a known sha256. The file is one ``base64(token bytes) rank``
line per token; the gpt-oss ``tokenizer.json`` holds the same ranks as a byte-level BPE
vocabulary (each byte written as one printable character), so the file is rebuilt from it and
checked against that sha256 before anything reads it.

Call :func:`use_local_o200k` before ``load_harmony_encoding``.
"""

import base64
import hashlib
import json
import os
import tempfile

#: sha256 of ``o200k_base.tiktoken`` as the ``openai-harmony`` 0.0.8 binary expects it.
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


def _byte_of_char():
    """The byte-level BPE alphabet: printable bytes stand for themselves, the rest from U+0100."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars)}


def o200k_file_bytes(tokenizer_json_path):
    """The ``o200k_base.tiktoken`` contents rebuilt from a gpt-oss ``tokenizer.json``."""
    with open(tokenizer_json_path, encoding="utf-8") as f:
        vocab = json.load(f)["model"]["vocab"]
    byte_of = _byte_of_char()
    ranked = sorted(vocab.items(), key=lambda kv: kv[1])
    if [rank for _, rank in ranked] != list(range(len(ranked))):
        raise ValueError(f"{tokenizer_json_path}: ranks are not 0..{len(ranked) - 1}")
    lines = (
        base64.b64encode(bytes(byte_of[ch] for ch in token)).decode("ascii") + f" {rank}\n"
        for token, rank in ranked
    )
    return "".join(lines).encode("ascii")


def use_local_o200k(model_dir):
    """Builds (once, atomically) and points ``openai-harmony`` at the local vocabulary file.

    Returns the directory holding ``o200k_base.tiktoken``. Raises when the rebuilt file does not
    have the sha256 the binary expects.
    """
    directory = os.path.join(tempfile.gettempdir(), f"rollgate-o200k-{O200K_SHA256[:16]}")
    path = os.path.join(directory, "o200k_base.tiktoken")
    if not os.path.exists(path):
        data = o200k_file_bytes(os.path.join(model_dir, "tokenizer.json"))
        digest = hashlib.sha256(data).hexdigest()
        if digest != O200K_SHA256:
            raise ValueError(
                f"o200k_base.tiktoken rebuilt from {model_dir} has sha256 {digest}, "
                f"openai-harmony expects {O200K_SHA256}"
            )
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    with open(path, "rb") as f:
        if hashlib.sha256(f.read()).hexdigest() != O200K_SHA256:
            raise ValueError(f"{path} does not have the sha256 openai-harmony expects")
    os.environ["TIKTOKEN_ENCODINGS_BASE"] = directory
    os.environ["TIKTOKEN_RS_CACHE_DIR"] = os.path.join(directory, "cache")
    return directory
