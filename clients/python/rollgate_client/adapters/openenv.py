"""OpenEnv (``openenv==0.10.0``): a loop-owning session whose ``fetch_training_trace()`` is a
validated ``TrainingTrace``, the record TRL's async GRPO (``trl.experimental.async_grpo``,
``HarnessRolloutWorker``) consumes unchanged.

    from functools import partial
    from trl.experimental.async_grpo import AsyncGRPOTrainer
    from trl.experimental.async_grpo.openenv_harness import HarnessRolloutWorker
    from rollgate_client.adapters.openenv import RollgateSessionFactory
    from rollgate_client.adapters import cli_launcher

    factory = partial(RollgateSessionFactory, "http://127.0.0.1:7860",
                      cli_launcher(["claude", "-p", "..."]), reward_fn=my_verifier)
    worker = HarnessRolloutWorker(..., harness_session_factory=factory)   # loop-owning mode

Per rollout (``create(task, seed, episode_id)``): a rollgate rollout with ``id=episode_id`` and
``group`` = the seed TRL gives every generation of a prompt; the agent launched at its base URL;
its turns answered by ``generate`` (your engine) or by the gateway's own backend (``backend=``).
``wait_for_completion`` is the agent's exit code; ``fetch_training_trace`` finishes the rollout
with ``reward_fn``'s reward and maps its ``?form=calls`` export onto ``TrainingTurn``s.

Several chains: every LLM call is one ``TrainingTurn`` (``node_id`` = the gateway's turn id), the
calls of one chain after another, each call once (a fork's shared prefix under the chain that trains
it), ``loss_mask`` 0 over the prompt and 1 exactly where a sample trains the output id. TRL rebuilds
rows by prefix: each chain's calls extend each other id for id, the next chain does not, so it
makes one row per chain (as the gateway's samples) and gives every row of the rollout its one
advantage (TRL's "one advantage per conversation"). A call without logprobs is refused
(``MissingLogprobsError``), or with ``missing_logprobs="context"`` kept as context (loss 0, named
in its ``metadata``), OpenEnv's convention for logprobs rejected on ingest.

``TrainingTurn`` has no field of its own for a teacher, rewards per turn or kept-token sets, so they
ride in its ``metadata``: ``teacher_logprobs`` (one per completion id: the teacher's logprob where
a sample trains the id, ``None`` elsewhere; a trained call its teacher gave none for is refused,
``missing_teacher="refuse"``, or kept as context, ``"context"``), ``turn_reward`` (the reward
posted for the call's turn) and ``sampling_mask`` (each completion id's kept set), each only when
the rollout has it.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from typing import Any, Awaitable, Callable

from openenv.core.harness import ResourceSession, ResourceSessionFactory, TrainingTrace, TrainingTurn, VerifyResult

from ..client import Handler, RollgateClient
from .agent_rollout import AgentRollout, Launcher
from .chain_rows import check_missing_logprobs_mode, trained_calls
from .turn_messages import turn_messages

__all__ = ["RollgateSession", "RollgateSessionFactory"]

#: ``reward_fn(task, run)``: the rollout's reward once its agent has ended (``None``: unscored,
#: which TRL keeps out of the group baseline). May be a coroutine function.
RewardFn = Callable[[Any, AgentRollout], "float | None | Awaitable[float | None]"]

#: The sampling keys a rollgate rollout takes from TRL's training policy.
_ROLLOUT_SAMPLING = ("temperature", "top_p", "top_k", "max_tokens")


class _LoopThread:
    """An event loop on a daemon thread with one ``RollgateClient``: OpenEnv sessions are
    synchronous and TRL calls them from a thread pool."""

    def __init__(self, url: str, admin_token: str | None, timeout: float) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True, name="rollgate-openenv")
        self.thread.start()
        self.client = self.call(self._client(url, admin_token, timeout))

    @staticmethod
    async def _client(url: str, admin_token: str | None, timeout: float) -> RollgateClient:
        return RollgateClient(url, admin_token, timeout=timeout)

    def call(self, coro: Awaitable[Any], timeout: float | None = None) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        if self.loop.is_running():
            self.call(self.client.close(), 30)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(30)


class RollgateSession(ResourceSession):
    """One rollout: an OpenEnv ``TrainableSession`` (``wait_for_completion``,
    ``fetch_training_trace``) whose agent owns its loop, so it offers no tools of its own."""

    def __init__(self, factory: "RollgateSessionFactory", task: Any, run: AgentRollout) -> None:
        self._factory = factory
        self.task = task
        self.run = run
        self.reward: float | None = None
        self._trace: TrainingTrace | None = None

    @property
    def rollout_id(self) -> str:
        return self.run.rollout.id

    def wait_for_completion(self, timeout_s: float | None = None) -> int:
        """The agent's exit code; ``TimeoutError`` after ``timeout_s`` (the factory's ``timeout_s``
        when not given), with the agent still running until ``fetch_training_trace`` stops it."""
        timeout = timeout_s if timeout_s is not None else self._factory.timeout_s
        return self._factory._loop.call(self.run.wait(timeout))

    def fetch_training_trace(self) -> TrainingTrace:
        """Finishes the rollout (the agent stopped if it still runs) with ``reward_fn``'s reward and
        returns its calls as a validated ``TrainingTrace`` (the same one on a second call)."""
        if self._trace is None:
            self._trace = self._factory._loop.call(self._fetch())
        return self._trace

    async def _fetch(self) -> TrainingTrace:
        if self._factory.reward_fn is not None:
            if not self.run.timed_out and self.run.exit_code is None:
                await self.run.wait(self._factory.timeout_s)
            reward = self._factory.reward_fn(self.task, self.run)
            self.reward = await reward if inspect.isawaitable(reward) else reward
        await self.run.finish(self.reward)
        client = self.run.client
        calls = trained_calls(
            await self.run.calls(),
            missing_logprobs=self._factory.missing_logprobs,
            missing_teacher=self._factory.missing_teacher,
        )
        messages = turn_messages(await client.tree(self.rollout_id))
        turns = []
        for call in calls:
            record = messages.get(call.turn) or {}
            turns.append(
                TrainingTurn(
                    node_id=call.turn,
                    prompt_token_ids=call.prompt_ids,
                    completion_token_ids=call.output_ids,
                    per_token_logps=[float(lp) for lp in call.logprobs],
                    loss_mask=call.loss_mask,
                    request={"messages": record.get("messages") or [], "tools": record.get("tools") or []},
                    response={
                        "choices": [
                            {"message": record.get("answer") or {}, "finish_reason": record.get("finish_reason")}
                        ]
                    },
                    metadata={
                        **call.metadata,
                        "rollout_id": self.rollout_id,
                        "sample_index": call.sample_index,
                        "weight_version": call.weight_version,
                        "reward": self.reward,
                        **({"teacher_logprobs": call.teacher_logprobs} if call.teacher_logprobs is not None else {}),
                        **({"turn_reward": call.reward} if call.reward is not None else {}),
                        **({"sampling_mask": call.kept_sets} if call.kept_sets is not None else {}),
                    },
                )
            )
        return TrainingTrace(turns=turns)

    def verify(self, transcript: list[dict[str, Any]], final_state: Any | None = None) -> VerifyResult:
        """The reward ``fetch_training_trace`` finished the rollout with (``None``: unscored)."""
        trace = self.fetch_training_trace()
        return VerifyResult(
            env_reward=self.reward,
            done=not self.run.timed_out,
            metrics={"exit_code": self.run.exit_code, "timed_out": self.run.timed_out},
            artifacts={
                "rollout_id": self.rollout_id,
                "chains": sorted({t.metadata.get("branch") for t in trace.turns}),
                "samples": len(self.run.samples or []),
            },
        )

    def initial_messages(self) -> list[dict[str, Any]]:
        return []

    def list_tools(self) -> list[Any]:
        return []

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        raise KeyError(f"the agent owns its tools; rollgate sessions offer none ({name})")

    def close(self) -> None:
        """A session closed before its trace was fetched is abandoned: its rollout is deleted."""
        if self.run.samples is None:
            self._factory._loop.call(self.run.abandon(), 60)


class RollgateSessionFactory(ResourceSessionFactory[RollgateSession]):
    """Makes a ``RollgateSession`` per rollout. TRL's ``HarnessRolloutWorker`` calls it with
    ``sampling=`` (its training policy), which becomes the rollouts' ``sampling``.

    ``launch(rollout, task)`` runs the agent (``cli_launcher``); ``generate`` resolves its turns
    with your engine, or ``backend`` names the gateway's own; ``reward_fn(task, run)`` scores it;
    ``timeout_s`` bounds the agent (default 30 min).
    """

    def __init__(
        self,
        gateway_url: str,
        launch: Launcher,
        *,
        generate: Handler | None = None,
        backend: str | None = None,
        reward_fn: RewardFn | None = None,
        sampling: dict[str, Any] | None = None,
        admin_token: str | None = None,
        timeout_s: float = 1800.0,
        missing_logprobs: str = "refuse",
        metadata: dict[str, Any] | None = None,
        teacher: str | None = None,
        missing_teacher: str = "refuse",
    ) -> None:
        check_missing_logprobs_mode(missing_logprobs, ("refuse", "context"))
        check_missing_logprobs_mode(missing_teacher, ("refuse", "context"), "missing_teacher")
        self.teacher = teacher
        self.missing_teacher = missing_teacher
        self.launch = launch
        self.generate = generate
        self.backend = backend
        self.reward_fn = reward_fn
        # OpenEnv's full-vocabulary policy spells "no top-k" as top_k -1 or 0; rollgate omits it.
        self.sampling = {
            k: v for k, v in (sampling or {}).items() if k in _ROLLOUT_SAMPLING and not (k == "top_k" and v <= 0)
        } or None
        self.timeout_s = timeout_s
        self.missing_logprobs = missing_logprobs
        self.metadata = metadata or {}
        self._loop = _LoopThread(gateway_url, admin_token, timeout=60.0)

    def create(self, task: Any, seed: int | None = None, episode_id: str | None = None) -> RollgateSession:
        create: dict[str, Any] = {
            "id": episode_id,
            "group": f"seed-{seed}" if seed is not None else None,
            "metadata": {**self.metadata, "openenv_seed": seed},
            "sampling": self.sampling,
            "backend": self.backend,
            **({"teacher": self.teacher} if self.teacher else {}),
        }
        run = self._loop.call(
            AgentRollout.start(self._loop.client, self.launch, task=task, generate=self.generate, **create), 60
        )
        return RollgateSession(self, task, run)

    def close(self) -> None:
        self._loop.close()
