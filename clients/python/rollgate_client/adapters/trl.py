"""TRL: a ``rollout_func`` for ``GRPOTrainer`` that runs an agent CLI through rollgate per row.

    from trl import GRPOConfig, GRPOTrainer
    from rollgate_client.adapters.trl import rollout_func, trainer_policy

    trainer = GRPOTrainer(
        model=..., reward_funcs=[lambda completions, rollgate_reward, **_: rollgate_reward],
        args=GRPOConfig(num_generations=4, ...), train_dataset=Dataset.from_list([{"prompt": task}]),
        rollout_func=rollout_func(launch, gateway="http://127.0.0.1:7860",
                                  generate=trainer_policy, reward=verify),
    )

TRL (``trl==1.16.0``, ``trainer/grpo_trainer.py``: ``RolloutFunc = Callable[[list[str],
GRPOTrainer], dict[str, Any]]``, called in ``_generate``) hands the function the batch's prompts,
each repeated ``num_generations`` times in a row, and needs exactly one row back per prompt:
``prompt_ids``, ``completion_ids`` and ``logprobs`` (lists per row, ``logprobs`` aligned with
``completion_ids``). Any other key goes to the reward functions as a keyword argument, one value per
row; ``env_mask`` (1 sampled, 0 tool output) becomes TRL's tool mask, so the loss covers exactly
the ids the policy sampled.

Per row this function creates a rollout (``group`` = the step and the prompt, so the rows TRL
normalises together are one rollgate group), runs ``launch(rollout, prompt)`` (the agent, to its
end), resolves the rollout's turns with ``generate`` when given (a ``serve_requests`` handler; the
default leaves them to the rollout's backend), finishes the rollout with ``reward(prompt,
outcome)`` when given, and maps its sample:

- ``prompt_ids``: the ids before the first trained id (the agent's first request as rendered);
  ``completion_ids``: the rest (every turn's output, tool results, the next prompts' new ids);
  ``env_mask``: the sample's ``loss_mask`` over the completion; ``logprobs``: the recorded ones,
  ``None`` where nothing was sampled (TRL reads ``None`` as NaN, and those positions are masked).
- One row is one sequence, and TRL takes one row per prompt. A rollout with several chains (a
  sub-agent, a compaction: one sample each) gives the row of the chain holding the rollout's last
  answer (``chains="last"``, the default: the one the reward judged), and the other chains are
  **not trained**; they are named in the row's ``rollgate_untrained`` (chain, label, sampled ids),
  and logged. ``chains="error"`` raises ``MultiChainRollout`` instead. (Trainers that take one row
  per chain, verl and slime, keep them all.)
- A trained position without a logprob (the engine did not report it: ``None`` in the sample, or a
  turn named in ``metadata["logprobs_absent_turns"]``) is refused with ``MissingLogprobsError``: a
  ratio against a made-up value trains on noise. ``missing_logprobs="recompute"`` fills them from
  the trainer's own forward pass instead.

Extra keys per row for the reward functions: ``rollgate_rollout_id``, ``rollgate_reward`` (when
``reward`` is given), ``rollgate_untrained``, and every key of the mapping ``launch`` returns,
prefixed ``agent_`` (``agent_ok``, ``agent_final_text``…).

TRL is imported by nothing here at import time; ``trainer_policy`` imports ``torch`` when called.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import threading
from typing import Any, Awaitable, Callable, Mapping, Sequence

from ..client import Handler, RollgateClient
from ..schema import Completion, PendingRequest, Rollout, Sample

__all__ = [
    "MissingLogprobsError",
    "MultiChainRollout",
    "RolloutWithoutSample",
    "rollout_func",
    "sample_row",
    "trainer_policy",
]

log = logging.getLogger("rollgate_client.adapters.trl")

#: Runs the agent on the prompt against the rollout, to its end; returns what the reward needs.
Launch = Callable[[Rollout, str], Awaitable[Mapping[str, Any]]]


class MissingLogprobsError(ValueError):
    """A trained position has no recorded logprob."""


class MultiChainRollout(ValueError):
    """A rollout gave several trained chains and ``chains="error"`` was asked for."""


class RolloutWithoutSample(ValueError):
    """A rollout recorded no finished turn, so there is no row to give TRL."""


def _absent(sample: Sample) -> list[int]:
    """Trained positions without a logprob: ``None``/NaN, or inside a turn the sample names."""
    named = {str(t) for t in (sample.metadata or {}).get("logprobs_absent_turns") or []}
    out = {i for i, (m, lp) in enumerate(zip(sample.loss_mask, sample.logprobs)) if m and (lp is None or lp != lp)}
    for span in sample.turn_spans:
        if str(span.get("turn")) in named:
            out.update(i for i in range(span["output_start"], span["end"]) if sample.loss_mask[i])
    return sorted(out)


def sample_row(
    sample: Sample,
    *,
    missing_logprobs: str = "refuse",
    recompute: Callable[[list[int]], Sequence[float]] | None = None,
) -> dict[str, Any]:
    """One sample as TRL's row: ``prompt_ids``, ``completion_ids``, ``logprobs``, ``env_mask``.

    ``recompute(input_ids)`` (needed with ``missing_logprobs="recompute"``) returns the logprob of
    every position of ``input_ids`` given the ids before it (index 0 unused)."""
    if missing_logprobs not in ("refuse", "recompute"):
        raise ValueError(f"missing_logprobs must be 'refuse' or 'recompute', not {missing_logprobs!r}")
    mask = [int(m) for m in sample.loss_mask]
    if not any(mask):
        raise RolloutWithoutSample(f"rollout {sample.rollout_id} sample {sample.index} trains no id")
    logprobs: list[Any] = list(sample.logprobs)
    absent = _absent(sample)
    if absent:
        if missing_logprobs == "refuse" or recompute is None:
            raise MissingLogprobsError(
                f"rollout {sample.rollout_id} sample {sample.index}: {len(absent)} trained ids have no "
                "logprob (the engine did not report them); complete with logprobs or pass "
                "missing_logprobs='recompute'"
            )
        fresh = recompute(list(sample.input_ids))
        for i in absent:
            logprobs[i] = float(fresh[i])
    start = mask.index(1)
    return {
        "prompt_ids": list(sample.input_ids[:start]),
        "completion_ids": list(sample.input_ids[start:]),
        "logprobs": [float(lp) if m else None for m, lp in zip(mask[start:], logprobs[start:])],
        "env_mask": mask[start:],
    }


def _finished_at(sample: Sample) -> float:
    return float(((sample.extra.get("timings") or {}).get("finished")) or 0)


def _pick(samples: list[Sample], chains: str) -> tuple[Sample, list[dict[str, Any]]]:
    """The sample that becomes the row, and what the other trained chains were."""
    trained = [s for s in samples if any(s.loss_mask)]
    if not trained:
        raise RolloutWithoutSample(
            f"rollout {samples[0].rollout_id if samples else '?'} has no trained sample (no turn finished)"
        )
    row = max(trained, key=lambda s: (_finished_at(s), s.index))
    others = [
        {"chain": s.extra.get("chain"), "branch": s.branch, "num_sampled": sum(s.loss_mask), "index": s.index}
        for s in trained
        if s is not row
    ]
    if others and chains == "error":
        raise MultiChainRollout(f"rollout {row.rollout_id} has {len(trained)} trained chains: {others}")
    if others:
        log.warning("rollout %s: %d other chain(s) not trained (TRL takes one row per prompt): %s",
                    row.rollout_id, len(others), others)
    return row, others


def _group(step: int, prompt: str) -> str:
    return f"trl-s{step}-{hashlib.sha1(prompt.encode()).hexdigest()[:12]}"


def _run(coro: Awaitable[Any]) -> Any:
    """Runs ``coro`` to its end from synchronous code (TRL's), in a thread if a loop is running."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)  # type: ignore[arg-type]
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)  # type: ignore[arg-type]
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = e

    t = threading.Thread(target=target)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def rollout_func(
    launch: Launch,
    *,
    gateway: str = "http://127.0.0.1:7860",
    admin_token: str | None = None,
    generate: Callable[[Any], Handler] | None = None,
    reward: Callable[[str, Mapping[str, Any]], float] | None = None,
    chains: str = "last",
    missing_logprobs: str = "refuse",
    concurrency: int = 4,
    create: Mapping[str, Any] | None = None,
    poll_wait: float = 1.0,
) -> Callable[[list[str], Any], dict[str, list[Any]]]:
    """A TRL ``rollout_func``: one rollgate rollout per prompt row (see the module's doc).

    ``generate(trainer)`` returns the handler that resolves each rollout's turns (called once per
    batch, so it sees the trainer's current weights: ``trainer_policy`` does that); without it
    the rollout's backend resolves them (``create={"backend": "vllm"}``, or your own gate worker).
    ``concurrency``: agents run at once. ``create``: more ``create_rollout`` arguments
    (``sampling``, ``metadata``, ``backend``…)."""
    if chains not in ("last", "error"):
        raise ValueError(f"chains must be 'last' or 'error', not {chains!r}")

    async def batch(prompts: list[str], trainer: Any) -> dict[str, list[Any]]:
        step = int(getattr(getattr(trainer, "state", None), "global_step", 0) or 0)
        handler = generate(trainer) if generate is not None else None
        recompute = (lambda ids: trainer_logprobs(trainer, ids)) if missing_logprobs == "recompute" else None
        gate = asyncio.Semaphore(concurrency)
        async with RollgateClient(gateway, admin_token=admin_token, timeout=120.0) as client:

            async def one(i: int, prompt: str) -> tuple[Sample, list[dict[str, Any]], Mapping[str, Any], float | None, str]:
                async with gate:
                    extra = dict(create or {})
                    metadata = {**(extra.pop("metadata", None) or {}), "trl_step": step, "trl_row": i}
                    rollout = await client.create_rollout(group=_group(step, prompt), metadata=metadata, **extra)
                    stop = asyncio.Event()
                    serving = None
                    if handler is not None:
                        serving = asyncio.ensure_future(client.serve_requests(
                            handler, concurrency=1, rollout=rollout.id, stop_event=stop, poll_wait=poll_wait))
                    try:
                        try:
                            outcome = await launch(rollout, prompt)
                        finally:
                            stop.set()
                            if serving is not None:
                                await serving
                        value = float(reward(prompt, outcome)) if reward is not None else None
                    except BaseException:
                        # A failed run trains nothing: the rollout goes (its pending turns get an error).
                        with contextlib.suppress(Exception):
                            await client.delete_rollout(rollout.id)
                        raise
                    samples = await client.finish_rollout(rollout.id, reward=value)
                    row, others = _pick(samples, chains)
                    return row, others, outcome, value, rollout.id

            results = await asyncio.gather(*(one(i, p) for i, p in enumerate(prompts)))
        out: dict[str, list[Any]] = {k: [] for k in ("prompt_ids", "completion_ids", "logprobs", "env_mask")}
        out["rollgate_rollout_id"], out["rollgate_untrained"] = [], []
        if reward is not None:
            out["rollgate_reward"] = []
        agent_keys = sorted({k for _, _, o, _, _ in results for k in o})
        for k in agent_keys:
            out[f"agent_{k}"] = []
        for sample, others, outcome, value, rid in results:
            for k, v in sample_row(sample, missing_logprobs=missing_logprobs, recompute=recompute).items():
                out[k].append(v)
            out["rollgate_rollout_id"].append(rid)
            out["rollgate_untrained"].append(others)
            if reward is not None:
                out["rollgate_reward"].append(value)
            for k in agent_keys:
                out[f"agent_{k}"].append(outcome.get(k))
        return out

    def func(prompts: list[str], trainer: Any) -> dict[str, list[Any]]:
        return _run(batch(list(prompts), trainer))

    return func


def trainer_logprobs(trainer: Any, ids: list[int]) -> list[float]:
    """Every position's logprob of ``ids`` under the trainer's current model (index 0: 0.0)."""
    import torch

    model = trainer.model
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids], device=model.device)).logits[0, :-1].float()
        lp = torch.log_softmax(logits, -1).gather(1, torch.tensor(ids[1:], device=model.device)[:, None])[:, 0]
    return [0.0] + lp.tolist()


def trainer_policy(trainer: Any, *, max_new_tokens: int = 256, temperature: float | None = None) -> Handler:
    """A gate handler that samples with the trainer's own model: on-policy generation.

    Each pending request's ``prompt_ids`` go through ``model.generate`` (the request's
    ``temperature``/``top_p`` when the agent or rollout set them, else the trainer's
    ``args.temperature``), stopping at the request's stop ids or after ``min(max_tokens,
    max_new_tokens)``. Logprobs are the sampled distribution's: ``log_softmax(logits /
    temperature)``, as TRL's own forward pass computes them. Requests are generated one at a time
    in a worker thread (the event loop keeps serving the gateway), the model in eval mode for the
    call and restored after."""
    import torch

    model = trainer.model
    tokenizer = getattr(trainer, "processing_class", None)
    pad = getattr(tokenizer, "pad_token_id", None)
    default_t = temperature if temperature is not None else float(getattr(trainer.args, "temperature", 1.0) or 1.0)
    lock = threading.Lock()

    def sample(pending: PendingRequest) -> Completion:
        t = pending.temperature if pending.temperature is not None else default_t
        top_p = pending.top_p if pending.top_p is not None else 1.0
        limit = min(pending.max_tokens or max_new_tokens, max_new_tokens)
        stops = pending.stop_token_ids
        with lock, torch.no_grad():
            was_training = model.training
            model.eval()
            try:
                ids = torch.tensor([pending.prompt_ids], device=model.device)
                out = model.generate(
                    input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=limit,
                    do_sample=t > 0, temperature=t if t > 0 else None, top_p=top_p if t > 0 else None,
                    top_k=None, eos_token_id=stops or None, pad_token_id=pad if pad is not None else (stops or [0])[0],
                    return_dict_in_generate=True, output_logits=True,
                )
            finally:
                model.train(was_training)
        new = out.sequences[0, ids.shape[1]:].tolist()
        scale = t if t > 0 else 1.0
        logprobs = [
            float(torch.log_softmax(step[0].float() / scale, -1)[tok])
            for step, tok in zip(out.logits, new)
        ]
        finish = "stop" if new and new[-1] in stops else "length"
        return Completion(output_ids=new, logprobs=logprobs, finish_reason=finish,
                          logprobs_mode="raw" if scale == 1.0 else "processed",
                          weight_version=int(getattr(trainer.state, "global_step", 0)))

    async def handler(pending: PendingRequest) -> Completion:
        return await asyncio.to_thread(sample, pending)

    return handler
