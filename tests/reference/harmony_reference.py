#!/usr/bin/env python3
"""Reference renderer and parser for gpt-oss: OpenAI's ``openai-harmony`` (PyPI, pinned).

Test-only helper used to cross-check rollgate's gpt-oss family.

Usage::

    .venv/bin/python tests/reference/harmony_reference.py MODEL_DIR [CONFIG_JSON] < cases.jsonl

``MODEL_DIR`` holds the gpt-oss ``tokenizer.json``, from which the o200k vocabulary file harmony
needs is rebuilt offline (``harmony_vocab.py``). ``CONFIG_JSON``: ``reasoning_effort``,
``conversation_start_date``, ``model_identity``, ``knowledge_cutoff`` (the system message). Each
stdin line is one of::

    {"op": "render", "messages": [...], "tools": [...] | null, "add_generation_prompt": bool,
     "conversion": "format" | "renderers"}
    {"op": "parse", "ids": [int, ...]}
    {"op": "encode", "text": "..."}

and produces exactly one stdout line, in order::

    render: {"ids": [...], "text": "..."}
    parse:  {"messages": [{"role", "name", "recipient", "channel", "content_type", "text"}, ...]}
    encode: {"ids": [...]}   (the text encoded as text: special-token spellings included)
    either: {"error": "ExceptionType: message"}

Messages are OpenAI-shaped (rollgate's ``toTemplateMessages``: leading system messages folded into
one). They become harmony messages as the format describes: a system message (identity, dates,
reasoning effort, channels), a developer message with a leading system message's text as
instructions and the tools as the ``functions`` namespace (a tool without properties takes no
argument), user messages, a later system message as developer instructions, an assistant
message as its reasoning on ``analysis``, its text on ``final`` (or a ``commentary`` preamble
before calls), one ``commentary`` message per call ``to=functions.NAME`` with content type
``<|constrain|>json``; a tool result from ``functions.NAME`` (its ``name``, else the name of the
call it answers) to ``assistant`` on ``commentary``. Renders use harmony's defaults
(``auto_drop_analysis``); with the generation prompt ``render_conversation_for_completion``
(``<|start|>assistant``), without it ``render_conversation``.

``"conversion": "renderers"`` converts messages the way PrimeIntellect's ``renderers`` (gpt_oss,
0.1.12) does instead, still rendering every message with harmony: the first system message
(wherever it is) as instructions, a tool's ``parameters or {}``, assistant text on ``final``
(before calls too), calls without a content type, analysis only for a call message that no later
final answer with text follows, a tool result named by its ``name`` or ``unknown``, the generation
prompt ``<|start|>assistant<|channel|>analysis<|message|>``, and a conversation ending in a final
answer closed with ``<|return|>``. Its results show where ``renderers`` differs from the format:
only in those choices.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harmony_vocab import use_local_o200k  # noqa: E402


def harmony_conversation(h, case, config):
    messages = case.get("messages")
    if not isinstance(messages, list):
        raise TypeError('"messages" must be an array')
    tools = case.get("tools") or []
    out = [system_message(h, config)]
    rest = messages
    instructions = None
    if messages and messages[0].get("role") == "system":
        instructions = messages[0].get("content") or ""
        rest = messages[1:]
    if instructions is not None or tools:
        dev = h.DeveloperContent.new()
        if instructions:
            dev = dev.with_instructions(instructions)
        if tools:
            described = []
            for tool in tools:
                fn = tool.get("function", tool)
                params = fn.get("parameters")
                takes_args = params is not None and (
                    params.get("type") != "object" or bool(params.get("properties"))
                )
                described.append(
                    h.ToolDescription.new(
                        fn["name"], fn.get("description") or "", parameters=params if takes_args else None
                    )
                )
            dev = dev.with_function_tools(described)
        out.append(h.Message.from_role_and_content(h.Role.DEVELOPER, dev))
    call_names = {}
    for m in rest:
        role = m.get("role")
        content = m.get("content") or ""
        if role == "system":
            dev = h.DeveloperContent.new().with_instructions(content)
            out.append(h.Message.from_role_and_content(h.Role.DEVELOPER, dev))
        elif role == "user":
            out.append(h.Message.from_role_and_content(h.Role.USER, content))
        elif role == "assistant":
            reasoning = m.get("reasoning_content")
            if reasoning:
                out.append(h.Message.from_role_and_content(h.Role.ASSISTANT, reasoning).with_channel("analysis"))
            calls = m.get("tool_calls") or []
            if not calls:
                out.append(h.Message.from_role_and_content(h.Role.ASSISTANT, content).with_channel("final"))
            elif content:
                out.append(h.Message.from_role_and_content(h.Role.ASSISTANT, content).with_channel("commentary"))
            for call in calls:
                fn = call["function"]
                call_names[call.get("id")] = fn["name"]
                out.append(
                    h.Message.from_role_and_content(h.Role.ASSISTANT, fn["arguments"])
                    .with_channel("commentary")
                    .with_recipient("functions." + fn["name"])
                    .with_content_type("<|constrain|>json")
                )
        elif role == "tool":
            name = m.get("name") or call_names.get(m.get("tool_call_id")) or "unknown"
            if not name.startswith("functions."):
                name = "functions." + name
            out.append(
                h.Message.from_author_and_content(h.Author.new(h.Role.TOOL, name), content)
                .with_recipient("assistant")
                .with_channel("commentary")
            )
        else:
            raise ValueError(f"unknown role {role!r}")
    return h.Conversation.from_messages(out)


def system_message(h, config):
    efforts = {"low": h.ReasoningEffort.LOW, "medium": h.ReasoningEffort.MEDIUM, "high": h.ReasoningEffort.HIGH}
    system = h.SystemContent.new().with_reasoning_effort(efforts[config.get("reasoning_effort", "medium")])
    system = system.with_conversation_start_date(config["conversation_start_date"])
    if "model_identity" in config:
        system = system.with_model_identity(config["model_identity"])
    if "knowledge_cutoff" in config:
        system = system.with_knowledge_cutoff(config["knowledge_cutoff"])
    return h.Message.from_role_and_content(h.Role.SYSTEM, system)


def renderers_conversion_ids(h, enc, case, config):
    """``renderers``' gpt_oss conversion (see the module doc), rendered with harmony."""
    messages = case["messages"]
    tools = case.get("tools") or []
    first_system = next((i for i, m in enumerate(messages) if m.get("role") == "system"), None)
    prefix = [system_message(h, config)]
    if first_system is not None or tools:
        dev = h.DeveloperContent.new()
        instructions = messages[first_system].get("content") if first_system is not None else ""
        if instructions:
            dev = dev.with_instructions(instructions)
        if tools:
            dev = dev.with_function_tools(
                [
                    h.ToolDescription.new(
                        t["function"]["name"],
                        t["function"].get("description", ""),
                        parameters=t["function"].get("parameters") or {},
                    )
                    for t in tools
                ]
            )
        prefix.append(h.Message.from_role_and_content(h.Role.DEVELOPER, dev))
    ids = list(enc.render_conversation(h.Conversation.from_messages(prefix)))

    def keeps_analysis(i):
        if not messages[i].get("tool_calls"):
            return False
        for later in messages[i + 1 :]:
            if later.get("role") == "assistant" and not later.get("tool_calls") and later.get("content"):
                return False
        return True

    for i, m in enumerate(messages):
        if i == first_system:
            continue
        role = m.get("role")
        content = m.get("content") or ""
        out = []
        if role == "user":
            out.append(h.Message.from_role_and_content(h.Role.USER, content))
        elif role == "system":
            dev = h.DeveloperContent.new().with_instructions(content)
            out.append(h.Message.from_role_and_content(h.Role.DEVELOPER, dev))
        elif role == "tool":
            name = m.get("name") or "unknown"
            if not name.startswith("functions."):
                name = "functions." + name
            out.append(
                h.Message.from_author_and_content(h.Author.new(h.Role.TOOL, name), content)
                .with_recipient("assistant")
                .with_channel("commentary")
            )
        elif role == "assistant":
            if keeps_analysis(i) and m.get("reasoning_content"):
                out.append(h.Message.from_role_and_content(h.Role.ASSISTANT, m["reasoning_content"]).with_channel("analysis"))
            if content:
                out.append(h.Message.from_role_and_content(h.Role.ASSISTANT, content).with_channel("final"))
            for call in m.get("tool_calls") or []:
                fn = call["function"]
                out.append(
                    h.Message.from_role_and_content(h.Role.ASSISTANT, fn["arguments"])
                    .with_channel("commentary")
                    .with_recipient("functions." + fn["name"])
                )
            if not out:
                out.append(h.Message.from_role_and_content(h.Role.ASSISTANT, "").with_channel("final"))
        for message in out:
            ids.extend(enc.render(message))
    end, ret = enc.encode("<|end|>", allowed_special="all")[0], enc.encode("<|return|>", allowed_special="all")[0]
    if case.get("add_generation_prompt", False):
        ids.extend(enc.encode("<|start|>assistant<|channel|>analysis<|message|>", allowed_special="all"))
    elif messages and messages[-1].get("role") == "assistant" and not messages[-1].get("tool_calls") and ids[-1] == end:
        ids[-1] = ret
    return ids


def run(h, enc, config, case):
    if not isinstance(case, dict):
        raise TypeError("each input line must be a JSON object")
    op = case.get("op", "render")
    if op == "render" and case.get("conversion", "format") == "renderers":
        ids = renderers_conversion_ids(h, enc, case, config)
        return {"ids": ids, "text": enc.decode_utf8(ids)}
    if op == "render":
        conversation = harmony_conversation(h, case, config)
        if case.get("add_generation_prompt", False):
            ids = enc.render_conversation_for_completion(conversation, h.Role.ASSISTANT)
        else:
            ids = enc.render_conversation(conversation)
        return {"ids": list(ids), "text": enc.decode_utf8(ids)}
    if op == "parse":
        parsed = enc.parse_messages_from_completion_tokens(case["ids"], h.Role.ASSISTANT, strict=False)
        return {
            "messages": [
                {
                    "role": m.author.role.value,
                    "name": m.author.name,
                    "recipient": m.recipient,
                    "channel": m.channel,
                    "content_type": m.content_type,
                    "text": "".join(c.text for c in m.content if hasattr(c, "text")),
                }
                for m in parsed
            ]
        }
    if op == "encode":
        return {"ids": list(enc.encode(case["text"], disallowed_special=()))}
    raise ValueError(f"unknown op {op!r}")


def main(argv):
    if len(argv) not in (2, 3):
        print(f"usage: {argv[0]} MODEL_DIR [CONFIG_JSON] < cases.jsonl", file=sys.stderr)
        return 2
    model_dir = argv[1]
    config = json.loads(argv[2]) if len(argv) == 3 else {}
    config.setdefault("conversation_start_date", "2025-06-28")
    out = sys.stdout
    out.reconfigure(encoding="utf-8", newline="\n")
    sys.stdin.reconfigure(encoding="utf-8")
    sys.stdout = sys.stderr
    try:
        use_local_o200k(model_dir)
        import openai_harmony as h

        enc = h.load_harmony_encoding(h.HarmonyEncodingName.HARMONY_GPT_OSS)
    except Exception as exc:  # noqa: BLE001 - report any setup failure and exit
        print(f"failed to load harmony for {model_dir!r}: {exc!r}", file=sys.stderr)
        return 1
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            result = run(h, enc, config, json.loads(line))
        except Exception as exc:  # noqa: BLE001 - reference errors are data, not crashes
            result = {"error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(result, ensure_ascii=False) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
