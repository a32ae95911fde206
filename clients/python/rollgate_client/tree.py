"""The compact turn-tree export (``GET /api/rollouts/:id/tree?form=compact``) expanded to the full
form: every turn's ``prompt_ids``, ``output_ids``, ``bridge_ids``, ``messages`` and ``tools`` from
the shared ``tokens``, ``messages`` (the message tree) and ``tool_sets``."""

from __future__ import annotations

from typing import Any


def expand_compact_tree(compact: dict[str, Any]) -> dict[str, Any]:
    """The ``rollgate.tree.v1`` export that ``compact`` (``rollgate.tree.compact.v1``) stands for.

    >>> compact = {"format": "rollgate.tree.compact.v1", "rollout": {}, "chains": [],
    ...     "tokens": [1, 2, 3, 4], "messages": [{"parent": None, "message": {"role": "user", "content": "hi"}}],
    ...     "tool_sets": [[]], "turns": [{"id": "t0", "parent": None, "status": "done", "history": 0,
    ...     "history_edits": [], "tools": 0, "context": [0, 2], "bridge": 0, "output": [2, 4]}]}
    >>> turn = expand_compact_tree(compact)["turns"][0]
    >>> turn["prompt_ids"], turn["output_ids"], turn["messages"]
    ([1, 2], [3, 4], [{'role': 'user', 'content': 'hi'}])
    """
    if compact.get("format") != "rollgate.tree.compact.v1":
        raise ValueError(f"not a compact tree export: format {compact.get('format')!r}")
    tokens: list[int] = compact["tokens"]
    nodes: list[dict[str, Any]] = compact["messages"]
    by_id = {t["id"]: t for t in compact["turns"]}

    def history(node: int | None, edits: list[list[Any]]) -> list[dict[str, Any]]:
        path = []
        while node is not None:
            path.append(nodes[node]["message"])
            node = nodes[node]["parent"]
        path.reverse()
        for i, message in edits:
            path[i] = message
        return path

    turns = []
    for t in compact["turns"]:
        record = {
            k: v
            for k, v in t.items()
            if k not in ("context", "bridge", "output", "history", "history_edits", "tools")
        }
        (c0, c1), (o0, o1), bridge = t["context"], t["output"], t["bridge"]
        ancestors = []
        parent = t["parent"]
        while parent is not None:
            ancestors.append(by_id[parent])
            parent = by_id[parent]["parent"]
        prompt: list[int] = []
        if not (t["status"] == "failed" and c1 - c0 == bridge):
            for a in reversed(ancestors):
                prompt += tokens[a["context"][0] : a["output"][1]]
            prompt += tokens[c0:c1]
        record["messages"] = history(t["history"], t["history_edits"])
        record["tools"] = compact["tool_sets"][t["tools"]]
        record["prompt_ids"] = prompt
        record["output_ids"] = tokens[o0:o1]
        record["bridge_ids"] = tokens[c0 : c0 + bridge]
        turns.append(record)
    return {
        "format": "rollgate.tree.v1",
        "rollout": compact["rollout"],
        "chains": compact["chains"],
        "turns": turns,
    }
