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

Per row, an ``AgentRollout`` (``group`` = the step and the prompt, so the rows TRL normalises
together are one rollgate group): the agent runs (``launch(rollout, prompt)``, an adapters
``Launcher``), its turns resolved by ``generate`` when given, the rollout finished with
``reward(prompt, outcome)`` when given (``outcome``: what ``launch`` returned). Its samples go
through ``chain_rows`` (the mapping every adapter shares), and one row becomes TRL's:

- ``prompt_ids``: the ids before the chain's first trained id; ``completion_ids``: the rest (every
  turn's output, tool results, the next prompts' new ids); ``env_mask``: the row's mask (1 exactly
  where the chain trains an id); ``logprobs``: the recorded ones, ``None`` where nothing is trained
  (TRL reads ``None`` as NaN, and those positions are masked).
- One row is one sequence, and TRL takes one row per prompt. A rollout with several chains (a
  sub-agent, a compaction, a rewrite fork: one sample each) gives the row of one chain, and the
  others are **not trained**: they are named in the row's ``rollgate_untrained`` (chain, label,
  trained ids) and logged. ``chains="last"`` (default): the chain whose leaf finished last, holding
  the answer the reward judged; ``"main"``: the rollout's first chain; ``"error"``: raise
  ``MultiChainRollout``. (Trainers that take a row per chain keep them all: verl, slime, TRL's async
  worker through OpenEnv.)
- ``missing_logprobs`` is ``chain_rows``': ``"refuse"`` (``MissingLogprobsError``), ``"context"``
  (those turns untrained), or ``"recompute"``: the row's logprobs from the trainer's own forward pass.

- With a teacher on the rollout (``create={"teacher": name}`` or the gateway's default), the
  ``rollgate_teacher_logprobs`` column: the teacher's logprob of each completion id the row trains,
  ``None`` elsewhere; ``missing_teacher`` (``"refuse"``: ``MissingTeacherError``, or ``"context"``)
  is ``chain_rows``' for a trained turn the teacher gave no score for.

Extra keys per row for the reward functions: ``rollgate_rollout_id``, ``rollgate_reward`` (with
``reward``), ``rollgate_untrained``, and ``agent_<key>`` for each key of a mapping ``launch``
returned (``agent_outcome`` for anything else, e.g. an exit code).

TRL is imported by nothing here; ``trainer_policy`` and ``trainer_logprobs`` import ``torch`` when
called.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
from typing import Any, Awaitable, Callable, Mapping

from ..client import Handler, RollgateClient
from ..schema import Completion, PendingRequest, Sample
from .agent_rollout import AgentRollout, Launcher
from .chain_rows import ChainRow, MissingLogprobsError, chain_rows

__all__ = [
    "MissingLogprobsError",
    "MultiChainRollout",
    "RolloutWithoutSample",
    "pick_row",
    "rollout_func",
    "trainer_logprobs",
    "trainer_policy",
    "trl_row",
]

log = logging.getLogger("rollgate_client.adapters.trl")

CHAINS = ("last", "main", "error")


class MultiChainRollout(ValueError):
    """A rollout gave several trained chains and ``chains="error"`` was asked for."""


class RolloutWithoutSample(ValueError):
    """A rollout has no chain that trains an id, so there is no row to give TRL."""


def _finished_at(sample: Sample) -> float:
    return float(((sample.extra.get("timings") or {}).get("finished")) or 0)


def pick_row(
    samples: list[Sample], chains: str = "last", missing_logprobs: str = "refuse", missing_teacher: str = "refuse"
) -> tuple[ChainRow, list[dict[str, Any]]]:
    """The row TRL gets for one rollout, and what its other trained chains were."""
    if chains not in CHAINS:
        raise ValueError(f"chains must be one of {', '.join(CHAINS)}, not {chains!r}")
    rows = chain_rows(samples, missing_logprobs=missing_logprobs, missing_teacher=missing_teacher)
    if not rows:
        rid = samples[0].rollout_id if samples else "?"
        raise RolloutWithoutSample(f"rollout {rid} has no chain that trains an id (no turn finished?)")
    if chains == "main":
        row = next((r for r in rows if r.sample.branch == "main"), min(rows, key=lambda r: r.sample.index))
    else:
        row = max(rows, key=lambda r: (_finished_at(r.sample), r.sample.index))
    others = [
        {"chain": r.sample.extra.get("chain"), "branch": r.sample.branch, "trained": sum(r.response_mask),
         "index": r.sample.index}
        for r in rows
        if r is not row
    ]
    if others and chains == "error":
        raise MultiChainRollout(f"rollout {row.sample.rollout_id} has {len(rows)} trained chains: {others}")
    if others:
        log.warning("rollout %s: %d other chain(s) not trained (TRL takes one row per prompt): %s",
                    row.sample.rollout_id, len(others), others)
    return row, others


def trl_row(row: ChainRow, recompute: Callable[[list[int]], list[float]] | None = None) -> dict[str, Any]:
    """A ``ChainRow`` as TRL's row: ``prompt_ids``, ``completion_ids``, ``logprobs``, ``env_mask``.
    A row without logprobs (``missing_logprobs="recompute"``) takes them from
    ``recompute(input_ids)`` (every position's logprob given the ids before it)."""
    logprobs = row.response_logprobs
    if logprobs is None:
        if recompute is None:
            raise MissingLogprobsError(row.sample.rollout_id, row.sample.index, row.sample.branch, ["(all)"])
        logprobs = recompute(row.input_ids)[len(row.prompt_ids):]
    out = {
        "prompt_ids": list(row.prompt_ids),
        "completion_ids": list(row.response_ids),
        "logprobs": [float(lp) if m else None for m, lp in zip(row.response_mask, logprobs)],
        "env_mask": list(row.response_mask),
    }
    if row.teacher_logprobs is not None:
        # GRPOTrainer has no distillation input: a column for a reward function or a custom loss.
        out["rollgate_teacher_logprobs"] = row.teacher_logprobs[len(row.prompt_ids):]
    return out


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
    launch: Launcher,
    *,
    gateway: str = "http://127.0.0.1:7860",
    admin_token: str | None = None,
    generate: Callable[[Any], Handler] | None = None,
    reward: Callable[[str, Any], float] | None = None,
    chains: str = "last",
    missing_logprobs: str = "refuse",
    missing_teacher: str = "refuse",
    concurrency: int = 4,
    agent_timeout: float | None = 1800.0,
    create: Mapping[str, Any] | None = None,
) -> Callable[[list[str], Any], dict[str, list[Any]]]:
    """A TRL ``rollout_func``: one rollgate rollout per prompt row (see the module's doc).

    ``generate(trainer)`` returns the handler that resolves each rollout's turns (called once per
    batch, so it sees the trainer's current weights: ``trainer_policy`` does that); without it
    the rollout's backend resolves them (``create={"backend": "vllm"}``, or your own gate worker).
    ``concurrency``: agents run at once; ``agent_timeout``: past it an agent is stopped and its turns
    so far are what trains. ``create``: more ``create_rollout`` arguments (``sampling``,
    ``metadata``, ``backend``…)."""
    if chains not in CHAINS:
        raise ValueError(f"chains must be one of {', '.join(CHAINS)}, not {chains!r}")

    async def batch(prompts: list[str], trainer: Any) -> dict[str, list[Any]]:
        step = int(getattr(getattr(trainer, "state", None), "global_step", 0) or 0)
        handler = generate(trainer) if generate is not None else None
        recompute = (lambda ids: trainer_logprobs(trainer, ids)) if missing_logprobs == "recompute" else None
        gate = asyncio.Semaphore(concurrency)
        async with RollgateClient(gateway, admin_token=admin_token, timeout=120.0) as client:

            async def one(i: int, prompt: str) -> tuple[AgentRollout, list[Sample]]:
                async with gate:
                    extra = dict(create or {})
                    metadata = {**(extra.pop("metadata", None) or {}), "trl_step": step, "trl_row": i}
                    run = await AgentRollout.start(client, launch, task=prompt, generate=handler, concurrency=1,
                                                   group=_group(step, prompt), metadata=metadata, **extra)
                    score = None if reward is None else (lambda task, r: float(reward(task, r.exit_code)))
                    return run, await run.complete(agent_timeout, reward_fn=score, task=prompt)

            results = await asyncio.gather(*(one(i, p) for i, p in enumerate(prompts)))
        picked = [pick_row(samples, chains, missing_logprobs, missing_teacher) for _, samples in results]
        out: dict[str, list[Any]] = {k: [] for k in ("prompt_ids", "completion_ids", "logprobs", "env_mask")}
        out["rollgate_rollout_id"], out["rollgate_untrained"] = [], []
        if reward is not None:
            out["rollgate_reward"] = []
        outcomes = [run.exit_code for run, _ in results]
        keys = sorted({k for o in outcomes if isinstance(o, Mapping) for k in o}) or ["outcome"]
        for k in keys:
            out[f"agent_{k}"] = []
        rows = [trl_row(row, recompute) for row, _ in picked]
        if any("rollgate_teacher_logprobs" in r for r in rows):
            out["rollgate_teacher_logprobs"] = [r.get("rollgate_teacher_logprobs") for r in rows]
        for (run, _), (row, others), outcome, trl in zip(results, picked, outcomes, rows):
            for k in ("prompt_ids", "completion_ids", "logprobs", "env_mask"):
                out[k].append(trl[k])
            out["rollgate_rollout_id"].append(run.rollout.id)
            out["rollgate_untrained"].append(others)
            if reward is not None:
                out["rollgate_reward"].append(run.reward)
            for k in keys:
                value = outcome.get(k) if isinstance(outcome, Mapping) else outcome
                out[f"agent_{k}"].append(value)
        return out

    def func(prompts: list[str], trainer: Any) -> dict[str, list[Any]]:
        return _run(batch(list(prompts), trainer))

    return func


def trainer_logprobs(trainer: Any, ids: list[int]) -> list[float]:
    """Every position's logprob of ``ids`` under the trainer's current model (index 0: 0.0), the
    logits divided by the trainer's sampling temperature as TRL's own forward pass does."""
    import torch

    model = trainer.model
    t = float(getattr(getattr(trainer, "args", None), "temperature", None) or 1.0)
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids], device=model.device)).logits[0, :-1].float() / t
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
                    top_k=0, eos_token_id=stops or None, pad_token_id=pad if pad is not None else (stops or [0])[0],
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
