"""The trainer API's shapes as dataclasses (docs/api.md, "Trainer side (/api)").

Every ``from_json`` keeps fields it does not know in ``extra``, so a newer gateway never breaks an
older client.
"""

from __future__ import annotations

import base64
import sys
from array import array
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

__all__ = [
    "Completion",
    "GatewayStatus",
    "PendingRequest",
    "Rollout",
    "RollgateError",
    "Sample",
    "ServeStats",
]


class RollgateError(Exception):
    """An error answer of the trainer API: ``{error: {type, message}}`` with a 4xx/5xx status."""

    def __init__(self, status: int, type: str, message: str) -> None:  # noqa: A002 - API name
        super().__init__(f"{status} {type}: {message}")
        self.status = status
        self.type = type
        self.message = message


#: Per field, the array type of the compact id transport (``ids_encoding: "base64"``): token ids
#: as little-endian int32, masks one byte per id, logprobs as little-endian float64 (NaN where no
#: logprob was reported: ``None`` here, as JSON's ``null``).
_BASE64_FIELDS = {
    "prompt_ids": "i",
    "input_ids": "i",
    "loss_mask": "B",
    "sft_mask": "B",
    "logprobs": "d",
    "position_rewards": "d",
    "teacher_logprobs": "d",
}


def _decoded(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """``data`` with base64 id fields turned back into the lists JSON would have carried."""
    if data.get("ids_encoding") != "base64":
        return data
    out = {k: v for k, v in data.items() if k != "ids_encoding"}
    for name, code in _BASE64_FIELDS.items():
        if isinstance(out.get(name), str):
            out[name] = decode_base64(out[name], code)
    kept = out.get("sampling_mask")
    if isinstance(kept, Mapping) and isinstance(kept.get("ids"), str):
        out["sampling_mask"] = {k: decode_base64(kept[k], "i") for k in ("offsets", "ids")}
    return out


def decode_base64(text: str, code: str) -> list[Any]:
    """A base64 array of the compact transport (``code`` as ``array``'s: ``i`` int32, ``B`` byte,
    ``d`` float64 with NaN as ``None``) as a list."""
    values = array(code, base64.b64decode(text))
    if sys.byteorder == "big" and values.itemsize > 1:
        values.byteswap()
    return absent_as_none(values.tolist()) if code == "d" else values.tolist()


def absent_as_none(logprobs: list[float]) -> list[float | None]:
    """Logprobs decoded from float64 with each NaN (no logprob reported) as ``None``."""
    return [None if lp != lp else lp for lp in logprobs]


def _split(cls: type, data: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    data = _decoded(data)
    names = {f.name for f in fields(cls)} - {"extra"}
    known = {k: v for k, v in data.items() if k in names}
    extra = {k: v for k, v in data.items() if k not in names}
    return known, extra


@dataclass
class Rollout:
    """A created rollout: point the agent at ``base_url`` and give it ``token`` as its API key."""

    id: str
    token: str
    base_url: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def openai_base_url(self) -> str:
        """For OpenAI clients (Chat Completions, Responses): ``<base_url>/v1``."""
        return self.base_url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        """For Anthropic clients (``ANTHROPIC_BASE_URL``): the SDK appends ``/v1/messages``."""
        return self.base_url

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Rollout":
        known, extra = _split(cls, data)
        return cls(**known, extra=extra)


@dataclass
class PendingRequest:
    """One turn waiting for the trainer: generate from ``prompt_ids`` with ``sampling``."""

    request_id: str
    rollout_id: str
    turn_id: str
    prompt_ids: list[int]
    sampling: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def max_tokens(self) -> int | None:
        return self.sampling.get("max_tokens")

    @property
    def temperature(self) -> float | None:
        return self.sampling.get("temperature")

    @property
    def top_p(self) -> float | None:
        return self.sampling.get("top_p")

    @property
    def stop_token_ids(self) -> list[int]:
        return list(self.sampling.get("stop_token_ids") or [])

    @property
    def lease_s(self) -> float | None:
        """The lease it was handed out with (``next_request(ack=True)``): no ``ack`` needed;
        ``None`` when it was not leased yet (``ack`` it)."""
        lease = self.extra.get("lease_s")
        return None if lease is None else float(lease)

    @property
    def expires_at(self) -> int | None:
        """When that lease runs out (milliseconds since the epoch), unless it is renewed."""
        at = self.extra.get("expires_at")
        return None if at is None else int(at)

    @property
    def routed_experts_from(self) -> int:
        """Leading positions of ``prompt_ids`` whose MoE routing the chain already has: send
        ``routed_experts`` from there (SGLang's ``routed_experts_start_len``)."""
        return int(self.extra.get("routed_experts_from", 0))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "PendingRequest":
        known, extra = _split(cls, data)
        known["prompt_ids"] = list(known.get("prompt_ids") or [])
        known["sampling"] = dict(known.get("sampling") or {})
        return cls(**known, extra=extra)


@dataclass
class Completion:
    """What a request handler returns: the ids the policy sampled (and their logprobs)."""

    output_ids: list[int]
    logprobs: list[float] | None = None
    finish_reason: str = "stop"
    weight_version: str | int | None = None
    #: ``raw`` or ``processed`` (after temperature/top-p), as the engine computes logprobs.
    logprobs_mode: str | None = None
    #: MoE routing ``{dtype, shape: [T, layers, top_k], data: base64}`` for positions
    #: ``routed_experts_from … len(prompt_ids) + len(output_ids) - 2`` of the request.
    routed_experts: dict[str, Any] | None = None
    #: Each output id's kept set (the ids it was drawn from after top-k/top-p), as vLLM's
    #: ``sampling_mask``: one list per output id, holding that id.
    sampling_mask: list[list[int]] | None = None


@dataclass
class Sample:
    """One training sample: a chain of turns from root to leaf, token for token.

    ``loss_mask`` is 1 exactly on the ids the policy sampled in this sample's own chain; ``logprobs``
    is aligned with ``input_ids`` (0 where nothing was sampled, ``None`` at the sampled ids of the
    turns in ``logprobs_absent``, whose producer reported none). A fork (``branch`` ``rewrite`` or
    ``retry``) starts with a prefix it shares with another sample, which trains it: there it is
    context (loss 0), and ``trained_from`` is where the sample's own part starts (0 otherwise).
    Every sampled id has loss 1 in at most one sample of a rollout.
    """

    input_ids: list[int]
    loss_mask: list[int]
    logprobs: list[float | None]
    reward: float | None = None
    branch: str = "main"
    turns: list[str] = field(default_factory=list)
    finish_reason: str | None = None
    num_sampled: int = 0
    trained_from: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    rollout_id: str | None = None
    index: int = 0
    #: Place in the gateway's sample log (``/api/samples/stream``); ``None`` elsewhere.
    cursor: int | None = None
    #: The rollout's group: compute advantages over rollouts of a group (``group_advantages``).
    group: str | None = None
    #: Per turn: ids' place in ``input_ids``, loss, weight version(s), sampling facts, staleness.
    turn_spans: list[dict[str, Any]] = field(default_factory=list)
    #: ``[oldest, newest]`` weight version of the sample's turns.
    version_span: list[Any] | None = None
    #: MoE routing of positions ``0 … len(input_ids) - 2`` when every one is covered
    #: (``routed_experts_rows`` decodes it); else ``metadata["routed_experts_absent"]`` says why.
    routed_experts: dict[str, Any] | None = None
    #: Turns whose sampled ids have no logprob (``None`` in ``logprobs``): their producer reported
    #: none (a ``complete`` without ``logprobs``, an engine that sent none).
    logprobs_absent: list[str] = field(default_factory=list)
    #: Rewards per turn (``reward_turn``), one per ``turn_spans`` entry, ``None`` where none was
    #: posted; ``None`` when the rollout has none at all.
    turn_rewards: list[float | None] | None = None
    #: Aligned with ``input_ids``: each turn's reward at its last sampled id (``None`` for a turn
    #: without one), 0 elsewhere; ``None`` when the rollout has no per-turn reward.
    position_rewards: list[float | None] | None = None
    #: Kept-token sets ``{offsets, ids}`` aligned with ``input_ids`` (``kept_sets`` gives one list
    #: per position), when some turn of the sample has them; ``sampling_mask_absent`` names the
    #: sampled turns without.
    sampling_mask: dict[str, Any] | None = None
    sampling_mask_absent: list[str] = field(default_factory=list)
    #: The rollout's teacher (on-policy distillation), when it has one.
    teacher: str | None = None
    #: With ``teacher``: aligned with ``input_ids``, its logprob of the sampled id at every trained
    #: position, ``None`` elsewhere and at the positions of ``teacher_missing``.
    teacher_logprobs: list[float | None] | None = None
    #: Trained turns the teacher gave no scores for: ``{turn, start, end, reason}`` each.
    teacher_missing: list[dict[str, Any]] = field(default_factory=list)
    #: The images the sample shows, in order: ``{start, end, hash, mime, width, height}``, where
    #: ``input_ids[start:end]`` are the image's pad tokens; ``RollgateClient.image(hash)`` gives
    #: its bytes, for the model's own processor to compute pixel values from.
    images: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def fit_for_importance_ratio(self) -> bool:
        """Whether every trained position (``loss_mask`` 1) has a recorded logprob: what a PPO/GRPO
        loss needs for ``exp(new - old)``. A sample that is not fit needs its old logprobs
        recomputed (or another loss); a 0 is never filled in for a missing one.

        >>> Sample(input_ids=[1, 2, 3], loss_mask=[0, 1, 1], logprobs=[0, -0.5, None]).fit_for_importance_ratio
        False
        """
        return all(lp is not None for lp, m in zip(self.logprobs, self.loss_mask) if m)

    @property
    def kept_sets(self) -> list[list[int]] | None:
        """The kept set of each position (empty where nothing was sampled), or ``None``.

        >>> Sample(input_ids=[5, 6, 7], loss_mask=[0, 1, 1], logprobs=[0, -1, -1],
        ...        sampling_mask={"offsets": [0, 0, 2, 3], "ids": [6, 9, 7]}).kept_sets
        [[], [6, 9], [7]]
        """
        if self.sampling_mask is None:
            return None
        offsets, ids = self.sampling_mask["offsets"], self.sampling_mask["ids"]
        return [ids[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]

    @property
    def prompt_length(self) -> int:
        """Ids before the first sampled one (the first turn's prompt)."""
        for i, m in enumerate(self.loss_mask):
            if m:
                return i
        return len(self.input_ids)

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        out.update(self.extra)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Sample":
        known, extra = _split(cls, data)
        return cls(**known, extra=extra)


@dataclass
class GatewayStatus:
    """``GET /api/status``: whether new turns are held, and how much work is outstanding."""

    paused: bool = False
    in_flight: int = 0
    held: int = 0
    pending_requests: int = 0
    #: The weight version in force (named by the last ``resume`` that named one).
    weight_version: str | int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "GatewayStatus":
        known, extra = _split(cls, data)
        return cls(**known, extra=extra)


@dataclass
class ServeStats:
    """What ``serve_requests`` did."""

    completed: int = 0
    #: Requests failed back to the agent (handler raised, or its completion was refused).
    failed: int = 0
    #: Requests that vanished before the answer landed (rollout finished or deleted): 404/409.
    dropped: int = 0
    #: Transport or server errors while polling (the worker backed off and kept going).
    errors: int = 0
    #: Requests the gateway withdrew before the answer landed (agent gone, turn timed out): 410.
    withdrawn: int = 0
