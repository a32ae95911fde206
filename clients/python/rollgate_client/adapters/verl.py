"""verl (``verl==0.9.1``): ``RollgateAgentLoop``, an ``AgentLoopBase`` registered as ``rollgate``.

Each ``run`` creates a rollout (``group`` = the dataset row's ``uid``, so a GRPO group's ``n``
rollouts share it), launches the agent at its base URL and resolves every turn it asks for through
``self.server_manager.generate(request_id, prompt_ids=..., sampling_params=...)``: verl's own
servers answer, so verl keeps its weight sync, sticky routing (``request_id`` = the rollout),
abort/resume of partial rollouts and MoE routing replay (``TokenOutput.routed_experts``). Then it
finishes the rollout with ``reward_fn``'s reward and maps the samples to ``AgentLoopOutput``s.

Several chains (sub-agent, compaction, rewrite): one ``AgentLoopOutput`` per chain. verl's v1
trainer (``trainer.use_v1=True``, TransferQueue) takes a list from ``run``: it stores each output
as ``{uid}_{session}_{index}``, scores the last one (the main chain comes last here), gives the
others its reward, computes GRPO over the last output of every session (one per rollout) and
broadcasts that advantage to every output of the session (``compute_advantage_for_multi_trajectories``).
The legacy trainer takes one output per ``run``: a rollout with more than one trained chain is
refused there (``ValueError`` naming the chains), never cut down to one.

Logprobs: a trained id the engine gave no logprob for is refused (``MissingLogprobsError``), unless
``missing_logprobs="recompute"``: then no output carries ``response_logprobs`` and verl's actor
computes the old policy's (with ``actor_rollout_ref.rollout.calculate_log_probs=False``).

With a teacher on the rollout (``teacher=`` in the config: a name the gateway knows; unset: the
gateway's default), every output carries ``extra_fields["teacher_ids"]`` and
``extra_fields["teacher_logprobs"]`` (``[len(prompt) + len(response), 1]``: each position's id and
the teacher's logprob of it where the row trains it, 0.0 elsewhere), the fields verl's
distillation loss reads (verl computes them itself only when it has teacher servers of its own);
a trained turn the teacher gave no score for is refused (``missing_teacher="refuse"``) or kept as
context (``"context"``). Rewards posted per turn go in ``extra_fields["turn_scores"]`` (the
rewarded ones of the row's trained turns, in order; every turn's, ``None`` for none, in
``extra_fields["rollgate"]["turn_rewards"]``). verl has no field for kept-token sets.

Config (``actor_rollout_ref.rollout.agent.agent_loop_config_path``, a YAML list)::

    - name: rollgate
      _target_: rollgate_client.adapters.verl.RollgateAgentLoop
      gateway_url: http://127.0.0.1:7860
      launcher: my_project.agents.launch_claude   # Launcher(rollout, task) -> exit code
      reward_fn: my_project.tasks.score            # optional: (task, run) -> float | None

and ``agent_name: rollgate`` in the dataset rows (or ``rollout.agent.default_agent_loop``).
"""

from __future__ import annotations

import base64
import re
import os
import time
from typing import Any, Callable
from uuid import uuid4

import numpy as np
from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput, register

from ..client import RollgateClient
from ..schema import Completion, PendingRequest
from .agent_rollout import AgentRollout, Launcher, resolve_callable
from .chain_rows import ChainRow, chain_rows, check_missing_logprobs_mode

__all__ = ["RollgateAgentLoop"]


def _routed_rows(experts: Any, start: int, end: int) -> dict[str, Any] | None:
    """``TokenOutput.routed_experts`` rows ``[start, end)`` as a completion's ``routed_experts``
    (``[positions, layers, top_k]``, narrowed to the smallest dtype that holds the expert ids)."""
    if experts is None:
        return None
    rows = np.asarray(experts)[start:end]
    dtype = "uint8" if rows.max(initial=0) < 256 else "uint16" if rows.max(initial=0) < 65536 else "int32"
    data = np.ascontiguousarray(rows.astype({"uint8": "<u1", "uint16": "<u2", "int32": "<i4"}[dtype]))
    return {"dtype": dtype, "shape": list(rows.shape), "data": base64.b64encode(data.tobytes()).decode()}


@register("rollgate")
class RollgateAgentLoop(AgentLoopBase):
    """An agent CLI on a rollgate rollout, its turns sampled by verl's servers; see the module."""

    def __init__(
        self,
        *args: Any,
        gateway_url: str | None = None,
        launcher: Launcher | str | None = None,
        reward_fn: Callable[..., Any] | str | None = None,
        admin_token: str | None = None,
        agent_timeout_s: float = 1800.0,
        missing_logprobs: str = "refuse",
        teacher: str | None = None,
        missing_teacher: str = "refuse",
        **kwargs: Any,
    ) -> None:
        kwargs.pop("tools", None)  # verl's own tool list: the agent brings its tools
        super().__init__(*args, **kwargs)
        check_missing_logprobs_mode(missing_logprobs, ("refuse", "recompute"))
        check_missing_logprobs_mode(missing_teacher, ("refuse", "context"), "missing_teacher")
        self.teacher = teacher
        self.missing_teacher = missing_teacher
        self.gateway_url = gateway_url or os.environ.get("ROLLGATE_URL", "http://127.0.0.1:7860")
        self.launcher: Launcher | None = resolve_callable(launcher)
        self.reward_fn = resolve_callable(reward_fn)
        self.admin_token = admin_token or os.environ.get("ROLLGATE_ADMIN_TOKEN")
        self.agent_timeout_s = agent_timeout_s
        self.missing_logprobs = missing_logprobs
        self.response_length = self.rollout_config.response_length
        self.use_v1 = bool(self.config.get("trainer", {}).get("use_v1", False))

    def _handler(self, sampling_params: dict[str, Any], rollout_id: str, timing: dict[str, float]):
        async def generate(pending: PendingRequest) -> Completion:
            params = dict(sampling_params)
            params["logprobs"] = self.missing_logprobs != "recompute"
            params["max_tokens"] = min(pending.max_tokens or self.response_length, self.response_length)
            if pending.stop_token_ids:
                params["stop_token_ids"] = pending.stop_token_ids
            t0 = time.monotonic()
            out = await self.server_manager.generate(
                request_id=rollout_id, prompt_ids=list(pending.prompt_ids), sampling_params=params
            )
            timing["generate_sequences"] += time.monotonic() - t0
            if out.stop_reason in ("aborted", "abort"):
                raise RuntimeError("verl aborted the generation (a weight update without partial rollout)")
            ids = list(out.token_ids)
            length = out.stop_reason == "length" or len(ids) >= params["max_tokens"]
            end = len(pending.prompt_ids) + len(ids) - 1
            return Completion(
                ids,
                list(out.log_probs) if out.log_probs else None,
                finish_reason="length" if length else "stop",
                weight_version=(out.extra_fields or {}).get("global_steps"),
                routed_experts=_routed_rows(out.routed_experts, pending.routed_experts_from, end),
            )

        return generate

    def _output(self, row: ChainRow, reward: float | None, metrics: AgentLoopMetrics, rollout_id: str) -> AgentLoopOutput:
        n = self.response_length
        sample = row.sample
        cut = max(0, len(row.response_ids) - n)
        extra = {
            "rollgate": {
                "rollout_id": rollout_id,
                "sample_index": sample.index,
                "branch": sample.branch,
                "turns": list(sample.turns),
                # Trained ids past rollout.response_length: verl's rows cannot hold them.
                "truncated_trained_ids": sum(row.response_mask[n:]),
                **({"turn_rewards": row.turn_rewards} if row.turn_rewards is not None else {}),
                **row.metadata,
            },
            "turn_scores": [r for r in row.turn_rewards or [] if r is not None],
            "tool_rewards": [],
        }
        if row.teacher_logprobs is not None:
            import torch

            kept = len(row.prompt_ids) + min(n, len(row.response_ids))
            extra["teacher_ids"] = torch.tensor(row.input_ids[:kept], dtype=torch.int32).unsqueeze(-1)
            extra["teacher_logprobs"] = torch.tensor(
                [0.0 if lp is None else lp for lp in row.teacher_logprobs[:kept]], dtype=torch.float32
            ).unsqueeze(-1)
        versions = [v for v in row.weight_versions if isinstance(v, (int, float))]
        if versions:
            extra["min_global_steps"], extra["max_global_steps"] = min(versions), max(versions)
        experts = None
        if row.routed_experts is not None:
            experts = np.asarray(row.routed_experts, dtype=np.int16)[: len(row.prompt_ids) + n]
        return AgentLoopOutput(
            prompt_ids=row.prompt_ids,
            response_ids=row.response_ids[:n] if cut else row.response_ids,
            response_mask=row.response_mask[:n] if cut else row.response_mask,
            response_logprobs=None if row.response_logprobs is None else row.response_logprobs[:n],
            routed_experts=experts,
            reward_score=reward,
            # One user or tool message and one answer per LLM call of the chain.
            num_turns=2 * len(sample.turns),
            metrics=metrics,
            extra_fields=extra,
        )

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput | list[AgentLoopOutput]:
        """One rollout of the dataset row ``kwargs``: the chains' outputs (the main chain last)."""
        if self.launcher is None:
            raise ValueError("RollgateAgentLoop needs a launcher (a Launcher or its dotted path in the YAML)")
        uid = kwargs.get("uid")
        # A rollout id takes letters, digits and `_ . : -`; verl's uids are uuids, indices numbers.
        group = re.sub(r"[^A-Za-z0-9_.:-]", "-", str(uid if uid is not None else kwargs.get("index", uuid4().hex)))[:80]
        rollout_id = f"verl-{group}-{uuid4().hex[:12]}"
        timing = {"generate_sequences": 0.0}
        async with RollgateClient(self.gateway_url, self.admin_token, timeout=60) as client:
            run = await AgentRollout.start(
                client,
                self.launcher,
                task=kwargs,
                generate=self._handler(sampling_params, rollout_id, timing),
                id=rollout_id,
                group=group,
                sampling={k: sampling_params[k] for k in ("temperature", "top_p") if sampling_params.get(k) is not None},
                metadata={"verl_index": str(kwargs.get("index"))},
                **({"teacher": self.teacher} if self.teacher else {}),
            )
            samples = await run.complete(self.agent_timeout_s, self.reward_fn, kwargs)
            reward = run.reward
        rows = chain_rows(samples, missing_logprobs=self.missing_logprobs, missing_teacher=self.missing_teacher)
        rows.sort(key=lambda r: r.sample.branch == "main")
        if not rows:
            raise ValueError(f"rollout {rollout_id} trained no id (the agent made no call, or every turn was stale)")
        metrics = AgentLoopMetrics(generate_sequences=timing["generate_sequences"])
        outputs = [self._output(row, reward, metrics, rollout_id) for row in rows]
        if len(outputs) == 1:
            return outputs[0]
        if not self.use_v1:
            raise ValueError(
                f"rollout {rollout_id} has {len(outputs)} trained chains "
                f"({', '.join(r.sample.branch for r in rows)}); verl's legacy trainer takes one output per "
                "run: set trainer.use_v1=True (one output per chain, one advantage per rollout)"
            )
        return outputs
