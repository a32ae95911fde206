"""The tree and calls forms of a rollout's samples (``GET /api/rollouts/:id/samples?form=tree`` /
``?form=calls``) expanded to the flat samples, and MoE routing rows decoded.

- ``tree``: ``segments`` hold every turn's own ids once, each with a ``parent`` segment; a sample is
  its ``leaf`` segment. Its ``input_ids``, ``logprobs`` and ``sft_mask`` are the segments' on the
  path from the root, its ``loss_mask`` the segments' own masks where ``trained_by`` is the
  sample's ``index`` (0 elsewhere), and its ``routed_experts`` the rows of the segments listed in
  ``routed_experts.parts``, in order; with rewards per turn, its ``position_rewards`` the segments'
  too, and its kept sets (``sampling_mask``) the segments' (empty for a segment without), and with a
  teacher its ``teacher_logprobs`` the segments' where it trains them (``None`` elsewhere). Train
  a shared prefix once from the segments.
- ``calls``: every LLM call's ``prompt_ids``, ``output_ids`` and, per output id, ``trained_by``
  (the sample that trains it, -1 when none). A sample's ``input_ids`` is its last call's prompt and
  output; loss and logprobs sit at each of its calls' output positions; ``sft_spans`` give the SFT
  mask; ``routed_experts.parts`` names the calls whose rows make its rows; with rewards per turn,
  each call's ``reward`` sits at its last output position of ``position_rewards``; a call's
  ``sampling_mask`` covers its output ids, and its ``teacher_logprobs`` the ids a sample trains.

Both expand to exactly the flat samples (the gateway's and this module's tests check it).
"""

from __future__ import annotations

import base64
import sys
from array import array
from typing import Any, Mapping

from .schema import decode_base64

#: Array type per field in the compact transport (``ids_encoding: "base64"``).
_CODES = {
    "input_ids": "i",
    "prompt_ids": "i",
    "output_ids": "i",
    "trained_by": "i",
    "loss_mask": "B",
    "sft_mask": "B",
    "logprobs": "d",
    "position_rewards": "d",
    "teacher_logprobs": "d",
    "offsets": "i",
    "ids": "i",
}


def _values(data: Mapping[str, Any], name: str, encoded: bool) -> list[Any]:
    value = data[name]
    if not encoded or not isinstance(value, str):
        return list(value)
    return decode_base64(value, _CODES[name])


def _kept_sets(data: Mapping[str, Any], encoded: bool) -> list[list[int]] | None:
    """A segment's or call's ``sampling_mask`` as one kept set per position, ``None`` without."""
    kept = data.get("sampling_mask")
    if kept is None:
        return None
    offsets, ids = (_values(kept, k, True) if encoded else list(kept[k]) for k in ("offsets", "ids"))
    return [ids[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]


def _joined_sets(sets: list[list[int]]) -> dict[str, list[int]]:
    offsets = [0]
    for s in sets:
        offsets.append(offsets[-1] + len(s))
    return {"offsets": offsets, "ids": [i for s in sets for i in s]}


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
        kept: list[list[int]] = []
        any_kept = False
        for s in path:
            sets = _kept_sets(s, encoded)
            any_kept = any_kept or sets is not None
            kept += sets if sets is not None else [[] for _ in s["input_ids"]]
            mine = s["trained_by"] == head["index"]
            arrays["input_ids"] += s["input_ids"]
            arrays["loss_mask"] += s["loss_mask"] if mine else [0] * len(s["loss_mask"])
            arrays["logprobs"] += s["logprobs"]
            arrays["sft_mask"] += s["sft_mask"]
            if "position_rewards" in s:
                arrays.setdefault("position_rewards", []).extend(_values(s, "position_rewards", encoded))
            if "teacher_logprobs" in s:
                teacher = _values(s, "teacher_logprobs", encoded) if mine else [None] * len(s["input_ids"])
                arrays.setdefault("teacher_logprobs", []).extend(teacher)
        if any_kept:
            arrays["sampling_mask"] = _joined_sets(kept)  # type: ignore[assignment]
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
        rewards: list[Any] | None = [0.0] * n if head.get("turn_rewards") is not None else None
        kept: list[list[int]] = [[] for _ in range(n)]
        any_kept = False
        teacher: list[Any] | None = [None] * n if head.get("teacher") is not None else None
        for turn in head["turns"]:
            c = calls[turn]
            start = len(c["prompt_ids"])
            sets = _kept_sets(c, encoded)
            if sets is not None:
                any_kept = True
                kept[start : start + len(sets)] = sets
            scores = _values(c, "teacher_logprobs", encoded) if teacher is not None else None
            for i, owner in enumerate(c["trained_by"]):
                loss[start + i] = 1 if owner == head["index"] else 0
                logprobs[start + i] = c["logprobs"][i]
                if scores is not None and owner == head["index"]:
                    teacher[start + i] = scores[i]  # type: ignore[index]
            for a, b in c["sft_spans"]:
                sft[a:b] = [1] * (b - a)
            if rewards is not None and c["output_ids"]:
                rewards[start + len(c["output_ids"]) - 1] = c.get("reward")
        arrays = {"input_ids": input_ids, "loss_mask": loss, "logprobs": logprobs, "sft_mask": sft}
        if rewards is not None:
            arrays["position_rewards"] = rewards
        if any_kept:
            arrays["sampling_mask"] = _joined_sets(kept)  # type: ignore[assignment]
        if teacher is not None:
            arrays["teacher_logprobs"] = teacher
        parts = (head.get("routed_experts") or {}).get("parts", [])
        rows = _joined_rows(head, [calls[p]["routed_experts"]["rows"] for p in parts])
        out.append(_flat(head, arrays, rows))
    return out
