#!/usr/bin/env python3
"""Reference renderer and parser backed by PrimeIntellect's ``renderers`` (PyPI, pinned).

Test-only helper used to cross-check rollgate's model families (renderers and output parsers).

Usage::

    .venv/bin/python tests/reference/renderers_reference.py MODEL_DIR RENDERER [CONFIG_JSON] < cases.jsonl

``MODEL_DIR`` holds ``tokenizer.json`` and ``tokenizer_config.json``; the tokenizer is loaded once,
strictly offline (never from the hub). ``RENDERER`` is a ``renderers`` config name (``qwen3.5``,
``qwen3.6``, ``glm-4.5``, ``gpt-oss``, …, or ``deepseek-v3.1``: ``renderers``' DeepSeek V3
renderer with V3.1's format changes, ``deepseek_v31_renderer.py``); ``CONFIG_JSON`` optional
config fields (``{"enable_thinking": true}``; ``{"thinking": true}`` for ``deepseek-v3.1``). Each
stdin line is one of::

    {"op": "render", "messages": [...], "tools": [...] | null, "add_generation_prompt": bool}
    {"op": "parse", "ids": [int, ...], "tools": [...] | null}
    {"op": "bridge", "previous_prompt_ids": [...], "previous_completion_ids": [...],
     "new_messages": [...], "tools": [...] | null}

(``op`` defaults to ``render``) and produces exactly one stdout line, in order::

    render: {"ids": [...], "text": "...", "encoded_ids": [...]}
    bridge: {"ids": [...] | null}  (``bridge_to_next_turn``: the next prompt extending the previous
            prompt and completion, or null where the renderer re-renders instead)
    parse:  {"content": "...", "reasoning_content": "..." | null,
             "tool_calls": [{"name": ..., "arguments": {...} | null, "status": "..."}]}
    either: {"error": "ExceptionType: message"}

``ids`` are the renderer's ids; ``text`` is their decode (special tokens kept); ``encoded_ids`` is
``tokenizer.encode(text)``: what ``apply_chat_template(tokenize=True)`` gives for a template that
renders ``text`` (the text between added tokens encoded whole). The two differ where the
renderer encodes one span of text in several pieces.

Blank input lines are skipped. Anything libraries print goes to stderr. Exit status is non-zero only
when the tokenizer or renderer cannot be created or the command line is wrong.
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


def parsed_to_json(parsed):
    calls = []
    for call in parsed.tool_calls:
        calls.append(
            {
                "name": call.name,
                "arguments": call.arguments,
                "status": str(call.status),
            }
        )
    return {
        "content": parsed.content,
        "reasoning_content": parsed.reasoning_content,
        "tool_calls": calls,
    }


def run(tok, renderer, case):
    if not isinstance(case, dict):
        raise TypeError("each input line must be a JSON object")
    op = case.get("op", "render")
    tools = case.get("tools")
    if tools is not None and not isinstance(tools, list):
        raise TypeError('"tools" must be an array or null')
    if op == "parse":
        ids = case.get("ids")
        if not isinstance(ids, list):
            raise TypeError('"ids" must be an array')
        return parsed_to_json(renderer.parse_response(ids, tools=tools or None))
    if op == "bridge":
        bridged = renderer.bridge_to_next_turn(
            list(case["previous_prompt_ids"]),
            list(case["previous_completion_ids"]),
            case["new_messages"],
            tools=tools or None,
        )
        return {"ids": None if bridged is None else list(bridged.token_ids)}
    if op != "render":
        raise ValueError(f"unknown op {op!r}")
    messages = case.get("messages")
    if not isinstance(messages, list):
        raise TypeError('"messages" must be an array')
    add_generation_prompt = case.get("add_generation_prompt", False)
    if not isinstance(add_generation_prompt, bool):
        raise TypeError('"add_generation_prompt" must be a boolean')
    ids = list(
        renderer.render_ids(
            messages, tools=tools or None, add_generation_prompt=add_generation_prompt
        )
    )
    text = tok.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)
    return {
        "ids": ids,
        "text": text,
        "encoded_ids": tok.encode(text, add_special_tokens=False),
    }


def main(argv):
    if len(argv) not in (3, 4):
        print(f"usage: {argv[0]} MODEL_DIR RENDERER [CONFIG_JSON] < cases.jsonl", file=sys.stderr)
        return 2
    model_dir, renderer_name = argv[1], argv[2]
    config_fields = json.loads(argv[3]) if len(argv) == 4 else {}
    if not os.path.isdir(model_dir):
        print(f"model directory not found: {model_dir!r}", file=sys.stderr)
        return 1

    out = sys.stdout
    out.reconfigure(encoding="utf-8", newline="\n")
    sys.stdin.reconfigure(encoding="utf-8")
    sys.stdout = sys.stderr

    from transformers import AutoTokenizer
    from renderers import create_renderer
    from renderers.configs import _config_class_for

    try:
        if renderer_name == "gpt-oss":
            # renderers' gpt-oss renders through openai-harmony, which needs the o200k file.
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            from harmony_vocab import use_local_o200k

            use_local_o200k(model_dir)
        tok = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
        if renderer_name == "deepseek-v3.1":
            # No V3.1 renderer in `renderers`: its V3 renderer with V3.1's changes.
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            from deepseek_v31_renderer import DeepSeekV31Renderer

            renderer = DeepSeekV31Renderer(tok, **config_fields)
        else:
            config = _config_class_for(renderer_name)(**config_fields)
            renderer = create_renderer(tok, config)
    except Exception as exc:  # noqa: BLE001 - report any setup failure and exit
        print(f"failed to create renderer {renderer_name!r} for {model_dir!r}: {exc!r}", file=sys.stderr)
        return 1

    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            result = run(tok, renderer, json.loads(line))
        except Exception as exc:  # noqa: BLE001 - renderer errors are data, not crashes
            result = {"error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(result, ensure_ascii=False) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
