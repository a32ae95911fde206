"""STAND-IN for slime (THUDM/slime is not on PyPI and needs GPUs: Megatron + SGLang), installed as
the ``slime`` modules the adapter imports, and a TEST DOUBLE of slime's SGLang router.

``Sample`` has the fields of ``slime/utils/types.py`` at commit
624b824a898ab0ec1fcb4d373004c7f3852bf515 (THUDM/slime, 2026-08-21): group_index, index,
rollout_id, prompt, tokens, multimodal_inputs, multimodal_train_inputs, multimodal_train_input_id,
apply_chat_template_kwargs, response, response_length, label, reward, loss_mask, weight_versions,
rollout_log_probs, rollout_top_p_token_ids, rollout_top_p_token_offsets, rollout_routed_experts,
remove_sample, teacher_log_probs, status (Status: pending, completed, truncated, aborted,
failed), metadata, generate_function_path, custom_rm_path, train_metadata, session_id,
non_generation_time; ``get_reward_value(args)``. ``RolloutFnTrainOutput(samples, metrics)`` is
``slime/rollout/base_types.py`` at the same commit. ``check_train_contract`` asserts what slime's
rollout manager asserts of a rollout function's output (``slime/ray/rollout.py``
``_convert_samples_to_train_data`` and ``slime/observability/rollout_data_utils.py``
``validate_rollout_id_annotated`` at that commit), written from their documented checks.

The router double answers ``POST /generate`` in SGLang's format (``meta_info.output_token_logprobs``
as ``[logprob, id, None]``, ``finish_reason.type``, ``weight_version``, ``routed_experts`` as base64
of little-endian int32 rows from ``routed_experts_start_len``, and for
``custom_params.return_top_p_token_ids`` the kept sets as slime reads them, ``top_p_token_ids``
base64 int32 and ``top_p_token_offsets``, ``slime/utils/types.py``) with a ``ScriptedPolicy`` per
``X-SMG-Routing-Key``.
"""

from __future__ import annotations

import base64
import enum
import struct
import sys
import types
from dataclasses import dataclass, field
from typing import Any

import multi_chain

LAYERS, TOP_K = 2, 2


def expert(p: int, token: int, layer: int, k: int) -> int:
    """The router double's routing: a function of position and token, so a misaligned row shows."""
    return (token * 7 + p * 11 + layer * 5 + k) % 128


@dataclass
class Sample:
    """STAND-IN for ``slime.utils.types.Sample`` (fields above)."""

    group_index: int | None = None
    index: int | None = None
    rollout_id: int | None = None
    prompt: Any = ""
    tokens: list[int] = field(default_factory=list)
    multimodal_inputs: dict | None = None
    multimodal_train_inputs: dict | None = None
    multimodal_train_input_id: str | None = None
    apply_chat_template_kwargs: dict = field(default_factory=dict)
    response: str = ""
    response_length: int = 0
    label: str | None = None
    reward: Any = None
    loss_mask: list[int] | None = None
    weight_versions: list[str] = field(default_factory=list)
    rollout_log_probs: list[float] | None = None
    rollout_top_p_token_ids: Any = None
    rollout_top_p_token_offsets: Any = None
    rollout_routed_experts: Any = None
    remove_sample: bool = False
    teacher_log_probs: list[float] | None = None

    class Status(enum.Enum):
        PENDING = "pending"
        COMPLETED = "completed"
        TRUNCATED = "truncated"
        ABORTED = "aborted"
        FAILED = "failed"

    status: Status = Status.PENDING
    metadata: dict = field(default_factory=dict)
    generate_function_path: str | None = None
    custom_rm_path: str | None = None
    train_metadata: dict | None = None
    session_id: str | None = None
    non_generation_time: float = 0.0

    def get_reward_value(self, args: Any) -> float:
        return self.reward if not getattr(args, "reward_key", None) else self.reward[args.reward_key]


@dataclass
class RolloutFnTrainOutput:
    """STAND-IN for ``slime.rollout.base_types.RolloutFnTrainOutput``."""

    samples: list
    metrics: dict | None = None


RM_REWARD = 0.25


async def async_rm(args: Any, sample: Sample) -> float:
    """STAND-IN for ``slime.rollout.rm_hub.async_rm``: a fixed score, so the test sees who got it."""
    async_rm.scored.append(sample)
    return RM_REWARD


async_rm.scored = []


def install() -> None:
    """Makes ``import slime.utils.types`` & co. give the stand-ins."""
    modules = {
        "slime": types.ModuleType("slime"),
        "slime.utils": types.ModuleType("slime.utils"),
        "slime.utils.types": types.ModuleType("slime.utils.types"),
        "slime.rollout": types.ModuleType("slime.rollout"),
        "slime.rollout.base_types": types.ModuleType("slime.rollout.base_types"),
        "slime.rollout.rm_hub": types.ModuleType("slime.rollout.rm_hub"),
    }
    modules["slime.utils.types"].Sample = Sample
    modules["slime.rollout.base_types"].RolloutFnTrainOutput = RolloutFnTrainOutput
    modules["slime.rollout.rm_hub"].async_rm = async_rm
    sys.modules.update(modules)


def check_train_contract(case: Any, rollouts: list[list[Sample]], args: Any) -> None:
    """What slime's rollout manager asserts of the samples before training."""
    for chains in rollouts:
        if len(chains) > 1:  # a rollout split into samples: siblings share a set rollout_id
            ids = {s.rollout_id for s in chains}
            case.assertNotIn(None, ids)
            case.assertEqual(len(ids), 1)
        for s in chains:
            case.assertEqual(len(s.loss_mask), s.response_length)
            if s.rollout_log_probs is not None:
                case.assertEqual(len(s.rollout_log_probs), s.response_length)
            if s.rollout_routed_experts is not None:
                case.assertEqual(len(s.rollout_routed_experts), len(s.tokens) - 1)
            if s.teacher_log_probs is not None:
                case.assertEqual(len(s.teacher_log_probs), s.response_length)
            if s.rollout_top_p_token_offsets is not None:  # slime's _extract_rollout_top_p_token_data
                offsets = s.rollout_top_p_token_offsets
                case.assertEqual(len(offsets), s.response_length + 1)
                case.assertEqual((offsets[0], offsets[-1]), (0, len(s.rollout_top_p_token_ids)))


class RouterDouble(multi_chain.JsonPostServer):
    """TEST DOUBLE of slime's SGLang router: ``POST /generate`` on a free loopback port."""

    def __init__(self) -> None:
        self.policies: dict[str, multi_chain.ScriptedPolicy] = {}
        self.payloads: list[dict] = []
        super().__init__(self.answer)

    def answer(self, path: str, headers: Any, body: dict) -> dict:
        self.payloads.append(body)
        key = headers.get("X-SMG-Routing-Key", "")
        ids, logprobs = self.policies.setdefault(key, multi_chain.ScriptedPolicy()).sample(body["input_ids"])
        meta: dict[str, Any] = {
            "output_token_logprobs": [[lp, t, None] for lp, t in zip(logprobs, ids)],
            "finish_reason": {"type": "stop"},
            "weight_version": "5",
        }
        if (body["sampling_params"].get("custom_params") or {}).get("return_top_p_token_ids"):
            # slime's SGLang: the kept sets as int32 meta arrays (ids base64, offsets a list).
            sets = [multi_chain.kept_set(k, t) for k, t in enumerate(ids)]
            flat = [i for s in sets for i in s]
            offsets = [0]
            for kept in sets:
                offsets.append(offsets[-1] + len(kept))
            meta["top_p_token_ids"] = base64.b64encode(struct.pack(f"<{len(flat)}i", *flat)).decode()
            meta["top_p_token_offsets"] = offsets
        if body.get("return_routed_experts"):
            seq = body["input_ids"] + ids
            start = body["routed_experts_start_len"]
            flat = [expert(p, seq[p], l, k) for p in range(start, len(seq) - 1) for l in range(LAYERS) for k in range(TOP_K)]
            meta["routed_experts"] = base64.b64encode(struct.pack(f"<{len(flat)}i", *flat)).decode()
        return {"text": "", "meta_info": meta}
