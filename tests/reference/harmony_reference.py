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
     "conversion": [CHOICE, ...] | "renderers", "tools_as_given": bool}
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
instructions and the tools as the ``functions`` namespace (a tool whose object schema has no
properties takes no argument, ``() => any``, as gpt-oss's own chat template declares it; with
``"tools_as_given"`` its schema goes to harmony unchanged, which 0.0.8 writes ``(_: {\n}) => any``),
user messages, a later system message as developer instructions, an assistant
message as its reasoning on ``analysis``, its text on ``final`` (or a ``commentary`` preamble
before calls), one ``commentary`` message per call ``to=functions.NAME`` with content type
``<|constrain|>json``; a tool result from ``functions.NAME`` (its ``name``, else the name of the
call it answers) to ``assistant`` on ``commentary``. Renders use harmony's defaults
(``auto_drop_analysis``); with the generation prompt ``render_conversation_for_completion``
(``<|start|>assistant``), without it ``render_conversation``.

``"conversion"`` switches on, one by one, the places where PrimeIntellect's ``renderers``
(gpt_oss, 0.1.12) converts messages differently (``RENDERERS_CHOICES``; ``"renderers"``: all of
them), still rendering with harmony: a render with all of them equal to ``renderers``' own shows
that it differs from the format only there, and each one alone shows what it changes.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harmony_vocab import use_local_o200k  # noqa: E402


#: Where PrimeIntellect's ``renderers`` (gpt_oss, 0.1.12) converts messages differently from the
#: format; each can be switched on alone (``"conversion": [NAME, ...]``) to see what it changes.
RENDERERS_CHOICES = {
    "generation_prompt": "the generation prompt opens analysis: <|start|>assistant<|channel|>analysis<|message|>",
    "return": "a conversation ending in a final answer is closed with <|return|>",
    "unconstrained_calls": "calls are written without the <|constrain|>json content type",
    "final_preamble": "text before calls goes on final instead of commentary",
    "analysis_rule": "analysis is kept only for a call message that no later final answer with text follows",
    "first_system_hoisted": "the first system message, wherever it is, becomes the instructions",
    "empty_parameters": "a tool without properties is declared as taking an empty object",
    "unknown_tool_author": "a tool result without a name is authored functions.unknown",
}


def harmony_ids(h, enc, case, config):
    """The render's ids, messages converted as the format says, or with ``renderers``' choices."""
    messages = case.get("messages")
    if not isinstance(messages, list):
        raise TypeError('"messages" must be an array')
    conversion = case.get("conversion") or []
    choices = set(RENDERERS_CHOICES) if conversion == "renderers" else set(conversion)
    unknown = choices - set(RENDERERS_CHOICES)
    if unknown:
        raise ValueError(f"unknown conversion choices {sorted(unknown)}")
    tools = case.get("tools") or []
    out = [system_message(h, config)]
    if "first_system_hoisted" in choices:
        first = next((i for i, m in enumerate(messages) if m.get("role") == "system"), None)
    else:
        first = 0 if messages and messages[0].get("role") == "system" else None
    rest = [m for i, m in enumerate(messages) if i != first]
    if first is not None or tools:
        dev = h.DeveloperContent.new()
        instructions = messages[first].get("content") if first is not None else None
        if instructions:
            dev = dev.with_instructions(instructions)
        if tools:
            as_given = case.get("tools_as_given", False)
            dev = dev.with_function_tools([tool_description(h, t, choices, as_given) for t in tools])
        out.append(h.Message.from_role_and_content(h.Role.DEVELOPER, dev))
    call_names = {}
    for i, m in enumerate(rest):
        role = m.get("role")
        content = m.get("content") or ""
        if role == "system":
            dev = h.DeveloperContent.new().with_instructions(content)
            out.append(h.Message.from_role_and_content(h.Role.DEVELOPER, dev))
        elif role == "user":
            out.append(h.Message.from_role_and_content(h.Role.USER, content))
        elif role == "assistant":
            calls = m.get("tool_calls") or []
            reasoning = m.get("reasoning_content")
            if reasoning and ("analysis_rule" not in choices or renderers_keeps_analysis(rest, i)):
                out.append(h.Message.from_role_and_content(h.Role.ASSISTANT, reasoning).with_channel("analysis"))
            if not calls or (content and "final_preamble" in choices):
                out.append(h.Message.from_role_and_content(h.Role.ASSISTANT, content).with_channel("final"))
            elif content:
                out.append(h.Message.from_role_and_content(h.Role.ASSISTANT, content).with_channel("commentary"))
            for call in calls:
                fn = call["function"]
                call_names[call.get("id")] = fn["name"]
                message = (
                    h.Message.from_role_and_content(h.Role.ASSISTANT, fn["arguments"])
                    .with_channel("commentary")
                    .with_recipient("functions." + fn["name"])
                )
                if "unconstrained_calls" not in choices:
                    message = message.with_content_type("<|constrain|>json")
                out.append(message)
        elif role == "tool":
            name = m.get("name")
            if not name and "unknown_tool_author" not in choices:
                name = call_names.get(m.get("tool_call_id"))
            name = name or "unknown"
            if not name.startswith("functions."):
                name = "functions." + name
            out.append(
                h.Message.from_author_and_content(h.Author.new(h.Role.TOOL, name), content)
                .with_recipient("assistant")
                .with_channel("commentary")
            )
        else:
            raise ValueError(f"unknown role {role!r}")
    conversation = h.Conversation.from_messages(out)
    # renderers applies its own analysis rule and renders every message as it is.
    render_config = h.RenderConversationConfig(auto_drop_analysis="analysis_rule" not in choices)
    if case.get("add_generation_prompt", False):
        ids = list(enc.render_conversation_for_completion(conversation, h.Role.ASSISTANT, render_config))
        if "generation_prompt" in choices:
            ids.extend(enc.encode("<|channel|>analysis<|message|>", allowed_special="all"))
        return ids
    ids = list(enc.render_conversation(conversation, render_config))
    last = messages[-1] if messages else {}
    end = enc.encode("<|end|>", allowed_special="all")[0]
    if "return" in choices and last.get("role") == "assistant" and not last.get("tool_calls") and ids[-1] == end:
        ids[-1] = enc.encode("<|return|>", allowed_special="all")[0]
    return ids


def tool_description(h, tool, choices, as_given=False):
    fn = tool.get("function", tool)
    params = fn.get("parameters")
    if "empty_parameters" in choices:
        params = params or {}
    elif as_given:
        pass  # harmony 0.0.8 declares an object without properties as (_: {\n}) => any
    elif params is not None and params.get("type") == "object" and not params.get("properties"):
        # gpt-oss's own chat template: a tool without properties takes no argument, () => any
        params = None
    return h.ToolDescription.new(fn["name"], fn.get("description") or "", parameters=params)


def renderers_keeps_analysis(messages, i):
    """renderers' rule: analysis stays for a call message no later final answer with text follows."""
    if not messages[i].get("tool_calls"):
        return False
    return not any(
        later.get("role") == "assistant" and not later.get("tool_calls") and later.get("content")
        for later in messages[i + 1 :]
    )


def system_message(h, config):
    efforts = {"low": h.ReasoningEffort.LOW, "medium": h.ReasoningEffort.MEDIUM, "high": h.ReasoningEffort.HIGH}
    system = h.SystemContent.new().with_reasoning_effort(efforts[config.get("reasoning_effort", "medium")])
    system = system.with_conversation_start_date(config["conversation_start_date"])
    if "model_identity" in config:
        system = system.with_model_identity(config["model_identity"])
    if "knowledge_cutoff" in config:
        system = system.with_knowledge_cutoff(config["knowledge_cutoff"])
    return h.Message.from_role_and_content(h.Role.SYSTEM, system)


def run(h, enc, config, case):
    if not isinstance(case, dict):
        raise TypeError("each input line must be a JSON object")
    op = case.get("op", "render")
    if op == "render":
        ids = harmony_ids(h, enc, case, config)
        return {"ids": ids, "text": enc.decode_utf8(ids)}
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
