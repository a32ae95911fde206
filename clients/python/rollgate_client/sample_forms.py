"""The tree and calls forms of a rollout's samples (``GET /api/rollouts/:id/samples?form=tree`` /
``?form=calls``) expanded to the flat samples, and MoE routing rows decoded.

- ``tree``: ``segments`` hold every turn's own ids once, each with a ``parent`` segment; a sample is
  its ``leaf`` segment. Its ``input_ids``, ``logprobs`` and ``sft_mask`` are the segments' on the
  path from the root, its ``loss_mask`` the segments' own masks where ``trained_by`` is the
  sample's ``index`` (0 elsewhere), and its ``routed_experts`` the rows of the segments listed in
  ``routed_experts.parts``, in order. Train a shared prefix once from the segments.
- ``calls``: every LLM call's ``prompt_ids``, ``output_ids`` and, per output id, ``trained_by``
  (the sample that trains it, -1 when none). A sample's ``input_ids`` is its last call's prompt and
  output; loss and logprobs sit at each of its calls' output positions; ``sft_spans`` give the SFT
  mask; ``routed_experts.parts`` names the calls whose rows make its rows.

Both expand to exactly the flat samples (the gateway's and this module's tests check it).
"""

from __future__ import annotations

import base64
import sys
from array import array
from typing import Any, Mapping

from .schema import absent_as_none

#: Array type per field in the compact transport (``ids_encoding: "base64"``).
_CODES = {
    "input_ids": "i",
    "prompt_ids": "i",
    "output_ids": "i",
    "trained_by": "i",
    "loss_mask": "B",
    "sft_mask": "B",
    "logprobs": "d",
}


def _values(data: Mapping[str, Any], name: str, encoded: bool) -> list[Any]:
    value = data[name]
    if not encoded or not isinstance(value, str):
        return list(value)
    values = array(_CODES[name], base64.b64decode(value))
    if sys.byteorder == "big" and values.itemsize > 1:
        values.byteswap()
    return absent_as_none(values.tolist()) if name == "logprobs" else values.tolist()


def routed_experts_rows(rows: Mapping[str, Any]) -> list[list[list[int]]]:
    """``{dtype, shape, data}`` rows as nested lists ``[T][layers][top_k]``.

    >>> routed_experts_rows({"dtype": "uint8", "shape": [2, 1, 2], "data": "AQIDBA=="})
    [[[1, 2]], [[3, 4]]]
    """
    code = {"uint8": "B", "uint16": "H", "int32": "i"}[rows["dtype"]]
    values = array(code, base64.b64decode(rows["data"]))
    if sys.byteorder == "big" and values.itemsize > 1:
        values.byteswap()
    t, layers, top_k = rows["shape"]
    flat = values.tolist()
    width = layers * top_k
    return [
        [flat[i * width + l * top_k : i * width + (l + 1) * top_k] for l in range(layers)] for i in range(t)
    ]


def _joined_rows(head: Mapping[str, Any], part_rows: list[Mapping[str, Any]]) -> dict[str, Any] | None:
    if not head.get("routed_experts"):
        return None
    data = b"".join(base64.b64decode(p["data"]) for p in part_rows)
    spec = head["routed_experts"]
    return {"dtype": spec["dtype"], "shape": list(spec["shape"]), "data": base64.b64encode(data).decode()}


def _flat(head: Mapping[str, Any], arrays: dict[str, list[Any]], rows: dict[str, Any] | None) -> dict[str, Any]:
    sample = {k: v for k, v in head.items() if k not in ("leaf", "routed_experts")}
    sample.update(arrays)
    if rows is not None:
        sample["routed_experts"] = rows
    return sample


def expand_tree(export: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The flat samples a ``form=tree`` export stands for (JSON or base64 ids)."""
    encoded = export.get("ids_encoding") == "base64"
    segments = [
        {**s, **{k: _values(s, k, encoded) for k in ("input_ids", "loss_mask", "logprobs", "sft_mask")}}
        for s in export["segments"]
    ]
    out = []
    for head in export["samples"]:
        path = []
        seg = head.get("leaf")
        while seg is not None:
            path.append(segments[seg])
            seg = segments[seg]["parent"]
        path.reverse()
        arrays: dict[str, list[Any]] = {"input_ids": [], "loss_mask": [], "logprobs": [], "sft_mask": []}
        for s in path:
            mine = s["trained_by"] == head["index"]
            arrays["input_ids"] += s["input_ids"]
            arrays["loss_mask"] += s["loss_mask"] if mine else [0] * len(s["loss_mask"])
            arrays["logprobs"] += s["logprobs"]
            arrays["sft_mask"] += s["sft_mask"]
        parts = (head.get("routed_experts") or {}).get("parts", [])
        rows = _joined_rows(head, [segments[p]["routed_experts"]["rows"] for p in parts])
        out.append(_flat(head, arrays, rows))
    return out


def expand_calls(export: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The flat samples a ``form=calls`` export stands for (JSON or base64 ids)."""
    encoded = export.get("ids_encoding") == "base64"
    calls = {
        c["turn"]: {
            **c,
            **{k: _values(c, k, encoded) for k in ("prompt_ids", "output_ids", "logprobs", "trained_by")},
        }
        for c in export["calls"]
    }
    out = []
    for head in export["samples"]:
        if head.get("token_ids") is False or not head.get("turns"):
            arrays: dict[str, list[Any]] = {"input_ids": [], "loss_mask": [], "logprobs": [], "sft_mask": []}
            out.append(_flat(head, arrays, None))
            continue
        leaf = calls[head["turns"][-1]]
        input_ids = leaf["prompt_ids"] + leaf["output_ids"]
        n = len(input_ids)
        loss, logprobs, sft = [0] * n, [0.0] * n, [0] * n
        for turn in head["turns"]:
            c = calls[turn]
            start = len(c["prompt_ids"])
            for i, owner in enumerate(c["trained_by"]):
                loss[start + i] = 1 if owner == head["index"] else 0
                logprobs[start + i] = c["logprobs"][i]
            for a, b in c["sft_spans"]:
                sft[a:b] = [1] * (b - a)
        arrays = {"input_ids": input_ids, "loss_mask": loss, "logprobs": logprobs, "sft_mask": sft}
        parts = (head.get("routed_experts") or {}).get("parts", [])
        rows = _joined_rows(head, [calls[p]["routed_experts"]["rows"] for p in parts])
        out.append(_flat(head, arrays, rows))
    return out
