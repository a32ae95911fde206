"""slime (THUDM/slime, not on PyPI): a custom generate function, the rollout-function form, and the
reward post-processing that keeps GRPO's baseline over rollouts.

    --custom-generate-function-path rollgate_client.adapters.slime.generate
    --custom-reward-post-process-path rollgate_client.adapters.slime.reward_post_process
    # or, instead of the generate function:
    --rollout-function-path rollgate_client.adapters.slime.generate_rollout

Settings come from the environment (slime passes only its own ``args``): ``ROLLGATE_URL`` (the
gateway), ``ROLLGATE_LAUNCHER`` (dotted path of a ``Launcher(rollout, task) -> exit code``; the task
is slime's ``Sample``), ``ROLLGATE_REWARD`` (optional dotted path of ``reward(sample, run) -> float``;
without it slime's reward model scores the main chain: ``slime.rollout.rm_hub.async_rm``),
``ROLLGATE_AGENT_TIMEOUT_S`` (default 1800), ``ROLLGATE_MISSING_LOGPROBS`` (``refuse`` or
``recompute``), ``ROLLGATE_TEACHER`` (a teacher name the gateway knows; unset: the gateway's
default) and ``ROLLGATE_MISSING_TEACHER`` (``refuse`` or ``context``).

Per ``generate(args, sample, sampling_params, evaluation=False)``: a rollout with ``group`` = the
sample's ``group_index``; the agent launched at its base URL; every turn sampled by slime's SGLang
router (``http://{args.sglang_router_ip}:{args.sglang_router_port}/generate``, the prompt ids, the
sampling params with the turn's ``max_new_tokens`` and stop ids, ``return_logprob``, and with
``--use-rollout-routing-replay`` the routed experts from ``routed_experts_start_len``, routed by
``X-SMG-Routing-Key`` = the rollout); finished with the reward; one ``Sample`` per chain.

Several chains: one ``Sample`` per chain, every one with the same ``rollout_id`` (slime's contract
for a rollout split into samples: its loss reducer counts the rollout once) and ``group_index``,
``tokens`` = the chain's ids, ``loss_mask`` over the response = 1 exactly where the chain trains
an id, ``rollout_log_probs`` aligned with it, ``weight_versions`` one per trained turn,
``rollout_routed_experts`` for positions ``0 … len(tokens) − 2``, the same ``reward``; with a
teacher, ``teacher_log_probs`` over the response (the teacher's logprob of each trained id, 0.0 off
the mask, as slime's on-policy distillation reads it); with ``--rollout-top-p`` below 1 (SGLang
asked for ``return_top_p_token_ids``), ``rollout_top_p_token_ids`` / ``rollout_top_p_token_offsets``
over the response (the kept set of response token i is ``ids[offsets[i]:offsets[i + 1]]``, empty
where nothing was sampled); rewards per turn (slime has no field for them) in
``metadata["rollgate"]["turn_rewards"]``. slime's stock
reward normalisation takes groups of ``n_samples_per_prompt`` samples and, when a rollout gives
several, normalises over the whole batch; ``reward_post_process`` baselines over the rollouts of a
group instead and gives each sample its rollout's advantage. A failed run gives back the input
sample aborted (``status=ABORTED``, ``remove_sample=True``, ``metadata["abort_reason"]``).
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import struct
from typing import Any

from ..client import RollgateClient
from ..groups import group_advantages
from ..http_client import open_http_client
from ..schema import Completion, PendingRequest
from .agent_rollout import AgentRollout, resolve_callable
from .chain_rows import chain_rows, check_missing_logprobs_mode
from .turn_messages import turn_messages

__all__ = ["generate", "generate_rollout", "reward_post_process"]

log = logging.getLogger("rollgate_client.adapters.slime")


def _settings() -> dict[str, Any]:
    missing = os.environ.get("ROLLGATE_MISSING_LOGPROBS", "refuse")
    check_missing_logprobs_mode(missing, ("refuse", "recompute"))
    missing_teacher = os.environ.get("ROLLGATE_MISSING_TEACHER", "refuse")
    check_missing_logprobs_mode(missing_teacher, ("refuse", "context"), "ROLLGATE_MISSING_TEACHER")
    return {
        "teacher": os.environ.get("ROLLGATE_TEACHER") or None,
        "missing_teacher": missing_teacher,
        "url": os.environ.get("ROLLGATE_URL", "http://127.0.0.1:7860"),
        "admin_token": os.environ.get("ROLLGATE_ADMIN_TOKEN"),
        "launcher": resolve_callable(os.environ.get("ROLLGATE_LAUNCHER")),
        "reward": resolve_callable(os.environ.get("ROLLGATE_REWARD")),
        "timeout": float(os.environ.get("ROLLGATE_AGENT_TIMEOUT_S", "1800")),
        "missing_logprobs": missing,
    }


def _sglang_handler(args: Any, routing_key: str, sampling_params: dict[str, Any], http: Any):
    """Resolves a rollout's turns with slime's SGLang router (its ``/generate`` wire format)."""
    replay = bool(getattr(args, "use_rollout_routing_replay", False))
    # slime's own rollout asks SGLang for the top-p kept sets when top-p truncates sampling.
    kept = float(getattr(args, "rollout_top_p", 1.0)) != 1.0

    async def handle(pending: PendingRequest) -> Completion:
        params = dict(sampling_params)
        limit = params.get("max_new_tokens")
        if pending.max_tokens is not None:
            params["max_new_tokens"] = min(pending.max_tokens, limit) if limit else pending.max_tokens
        if pending.stop_token_ids:
            params["stop_token_ids"] = sorted(set(params.get("stop_token_ids") or []) | set(pending.stop_token_ids))
        if kept:
            params["custom_params"] = {**(params.get("custom_params") or {}), "return_top_p_token_ids": True}
        payload: dict[str, Any] = {"input_ids": list(pending.prompt_ids), "sampling_params": params, "return_logprob": True}
        if replay:
            payload["return_routed_experts"] = True
            payload["routed_experts_start_len"] = pending.routed_experts_from
        resp = await http.request("POST", "/generate", json_body=payload, headers={"X-SMG-Routing-Key": routing_key})
        if resp.status != 200:
            raise RuntimeError(f"SGLang /generate answered {resp.status}: {resp.text[:300]}")
        meta = resp.json()["meta_info"]
        pairs = meta.get("output_token_logprobs") or []
        finish = (meta.get("finish_reason") or {}).get("type")
        if finish == "abort":
            raise RuntimeError("SGLang aborted the generation")
        rows = None
        if replay and meta.get("routed_experts") is not None:
            count = len(pending.prompt_ids) + len(pairs) - 1 - pending.routed_experts_from
            rows = {"dtype": "int32", "shape": [count, args.num_layers, args.moe_router_topk], "data": meta["routed_experts"]}
        return Completion(
            [int(p[1]) for p in pairs],
            [p[0] for p in pairs],
            finish_reason="length" if finish == "length" else "stop",
            weight_version=meta.get("weight_version"),
            routed_experts=rows,
            sampling_mask=_top_p_sets(meta) if kept else None,
        )

    return handle


def _int32s(value: Any) -> list[int] | None:
    """An SGLang int32 meta array (base64 of little-endian int32, or a list) as a list."""
    if value is None:
        return None
    if isinstance(value, str):
        raw = base64.b64decode(value)
        return list(struct.unpack(f"<{len(raw) // 4}i", raw))
    return [int(v) for v in value]


def _top_p_sets(meta: dict[str, Any]) -> list[list[int]] | None:
    """SGLang's top-p kept sets (``top_p_token_ids`` / ``top_p_token_offsets``, slime's keys) as
    one set per output id, the gateway's ``sampling_mask``."""
    ids = _int32s(meta.get("top_p_token_ids", meta.get("top_p_kept_token_ids")))
    offsets = _int32s(meta.get("top_p_token_offsets", meta.get("top_p_kept_token_offsets")))
    if ids is None or offsets is None:
        return None
    return [ids[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]


def _top_p_fields(row: Any) -> tuple[list[int] | None, list[int] | None]:
    """slime's ragged ``rollout_top_p_token_ids`` / ``_offsets`` over the response, when every
    trained id has its kept set (slime's top-p correction needs one at each)."""
    sets = row.kept_sets
    if sets is None or any(m and not k for m, k in zip(row.response_mask, sets)):
        return None, None
    ids: list[int] = []
    offsets = [0]
    for k in sets:
        ids += k
        offsets.append(len(ids))
    return ids, offsets


def _aborted(sample: Any, reason: str) -> list[Any]:
    """The input sample marked failed, as slime's own agent example does: nothing of it trains."""
    from slime.utils.types import Sample

    sample.tokens = [0, 0]
    sample.response = ""
    sample.response_length = 1
    sample.loss_mask = [0]
    sample.rollout_log_probs = [0.0]
    sample.reward = 0.0
    sample.remove_sample = True
    sample.status = Sample.Status.ABORTED
    sample.metadata = {**(sample.metadata or {}), "abort_reason": reason}
    log.warning("rollgate rollout for sample %s aborted: %s", sample.index, reason)
    return [sample]


async def generate(args: Any, sample: Any, sampling_params: dict[str, Any], evaluation: bool = False) -> list[Any]:
    """slime's custom generate function: one rollgate rollout of ``sample``, one ``Sample`` per chain."""
    from slime.utils.types import Sample

    s = _settings()
    if s["launcher"] is None:
        raise ValueError("set ROLLGATE_LAUNCHER to the dotted path of a Launcher(rollout, task)")
    router = f"http://{args.sglang_router_ip}:{args.sglang_router_port}"
    rollout_id = sample.session_id or f"slime-{sample.group_index}-{sample.index}"
    sample.session_id = rollout_id
    http = open_http_client(router, timeout=float(getattr(args, "rollgate_generate_timeout", 600)))
    try:
        async with RollgateClient(s["url"], s["admin_token"], timeout=60) as client:
            run = await AgentRollout.start(
                client,
                s["launcher"],
                task=sample,
                generate=_sglang_handler(args, rollout_id, sampling_params, http),
                id=rollout_id,
                group=str(sample.group_index),
                sampling={k: sampling_params[k] for k in ("temperature", "top_p") if k in sampling_params},
                metadata={"slime_index": sample.index, "evaluation": evaluation},
                **({"teacher": s["teacher"]} if s["teacher"] else {}),
            )
            samples = await run.complete(s["timeout"], s["reward"], sample)
            reward = run.reward
            messages = turn_messages(await client.tree(rollout_id))
    except Exception as e:  # noqa: BLE001 - a failed run is an aborted sample, as slime expects
        return _aborted(sample, f"{type(e).__name__}: {e}")
    finally:
        await http.close()
    # Trained ids without logprobs raise: the engine is set up wrong, every sample would train on noise.
    rows = chain_rows(samples, missing_logprobs=s["missing_logprobs"], missing_teacher=s["missing_teacher"])
    if not rows:
        return _aborted(sample, "the rollout trained no id")
    out = []
    for row in sorted(rows, key=lambda r: r.sample.branch != "main"):
        last = messages.get(str(row.sample.turns[-1])) or {}
        top_p_ids, top_p_offsets = _top_p_fields(row)
        teacher = row.teacher_logprobs
        chain_sample = Sample(
            group_index=sample.group_index,
            index=sample.index,
            rollout_id=sample.index,
            prompt=sample.prompt,
            label=sample.label,
            tokens=row.input_ids,
            response=((last.get("answer") or {}).get("content") or ""),
            response_length=len(row.response_ids),
            loss_mask=row.response_mask,
            rollout_log_probs=row.response_logprobs,
            weight_versions=[str(v) for v in row.weight_versions],
            rollout_routed_experts=row.routed_experts,
            teacher_log_probs=None
            if teacher is None
            else [0.0 if lp is None else lp for lp in teacher[len(row.prompt_ids) :]],
            rollout_top_p_token_ids=top_p_ids,
            rollout_top_p_token_offsets=top_p_offsets,
            reward=reward,
            status=Sample.Status.TRUNCATED if row.sample.finish_reason == "length" else Sample.Status.COMPLETED,
            metadata={
                **(sample.metadata or {}),
                "rollgate": {
                    "rollout_id": rollout_id,
                    "sample_index": row.sample.index,
                    "branch": row.sample.branch,
                    "exit_code": run.exit_code,
                    "timed_out": run.timed_out,
                    **({"turn_rewards": row.turn_rewards} if row.turn_rewards is not None else {}),
                    **row.metadata,
                },
            },
            session_id=rollout_id,
        )
        out.append(chain_sample)
    if reward is None:
        from slime.rollout.rm_hub import async_rm

        reward = await async_rm(args, out[0])  # slime's reward model on the main chain, for all chains
        for chain_sample in out:
            chain_sample.reward = reward
    return out


def reward_post_process(args: Any, samples: list[Any]) -> tuple[list[float], list[float]]:
    """``--custom-reward-post-process-path``: GRPO-style advantages over the rollouts of each group
    (``group_index``; a rollout is a ``rollout_id``), the same for every sample of a rollout;
    divided by the group's standard deviation with ``--grpo-std-normalization``."""
    raw = [s.get_reward_value(args) for s in samples]
    rows = [
        {"rollout_id": s.rollout_id if s.rollout_id is not None else s.index, "group": str(s.group_index), "reward": r}
        for s, r in zip(samples, raw)
    ]
    per_rollout = group_advantages(rows, normalize_std=bool(getattr(args, "grpo_std_normalization", True)))
    return raw, [per_rollout[r["rollout_id"]] for r in rows]


def generate_rollout(args: Any, rollout_id: int, data_source: Any, evaluation: bool = False) -> Any:
    """``--rollout-function-path``: ``args.rollout_batch_size`` groups from ``data_source``, each
    sample run by ``generate`` (at most ``args.rollout_concurrency``, default 16, at once), as
    ``RolloutFnTrainOutput(samples=[group][rollout][chain])``. Evaluation goes to slime's own
    ``generate_rollout`` (set ``--custom-generate-function-path`` to ``generate`` for it)."""
    from slime.rollout.base_types import RolloutFnTrainOutput

    if evaluation:
        from slime.rollout.sglang_rollout import generate_rollout as stock

        return stock(args, rollout_id, data_source, evaluation=True)
    groups = data_source.get_samples(args.rollout_batch_size)
    limit = asyncio.Semaphore(int(getattr(args, "rollout_concurrency", 16)))
    params = {
        "temperature": args.rollout_temperature,
        "top_p": args.rollout_top_p,
        "top_k": args.rollout_top_k,
        "max_new_tokens": args.rollout_max_response_len,
        "skip_special_tokens": False,
        "no_stop_trim": True,
        "spaces_between_special_tokens": False,
    }

    async def one(sample: Any) -> list[Any]:
        async with limit:
            return await generate(args, sample, dict(params))

    async def all_groups() -> list[list[list[Any]]]:
        return list(await asyncio.gather(*(asyncio.gather(*(one(s) for s in group)) for group in groups)))

    out = [list(group) for group in asyncio.run(all_groups())]
    return RolloutFnTrainOutput(samples=out, metrics={"rollgate/chains": sum(len(r) for g in out for r in g)})
