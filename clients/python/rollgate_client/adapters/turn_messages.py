"""The messages of a rollout's turns (``GET /api/rollouts/:id/tree``) in OpenAI Chat form, for the
adapters whose trainers keep a transcript beside the ids (OpenEnv's ``request``/``response``,
verifiers' message nodes). The ids stay the training data; these are for reward functions and
viewers."""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["chat_message", "chat_tool", "turn_messages"]


def chat_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """A canonical message (tool calls as ``{id, name, arguments}``) in OpenAI Chat form."""
    out: dict[str, Any] = {"role": message["role"], "content": message.get("content")}
    if message.get("reasoning"):
        out["reasoning_content"] = message["reasoning"]
    if message.get("tool_calls"):
        out["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in message["tool_calls"]
        ]
    if message.get("tool_call_id"):
        out["tool_call_id"] = message["tool_call_id"]
    if message.get("name"):
        out["name"] = message["name"]
    return out


def chat_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A canonical tool spec as an OpenAI Chat function tool."""
    return {
        "type": "function",
        "function": {
            "name": tool["name"],
            "description": tool.get("description") or "",
            "parameters": tool.get("parameters") or {},
        },
    }


def turn_messages(tree: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Turn id → ``{"messages", "answer", "tools"}`` of a tree export, in OpenAI Chat form."""
    out = {}
    for turn in tree.get("turns") or []:
        answer = turn.get("answer")
        out[str(turn["id"])] = {
            "messages": [chat_message(m) for m in turn.get("messages") or []],
            "answer": chat_message(answer) if answer else None,
            "tools": [chat_tool(t) for t in turn.get("tools") or []],
            "finish_reason": turn.get("finish_reason"),
        }
    return out
