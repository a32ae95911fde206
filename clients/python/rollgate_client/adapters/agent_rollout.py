"""One rollout run by an adapter: the five steps every trainer's hook does with rollgate.

Create the rollout (``group`` = the task or prompt, so advantages are taken over rollouts), launch
the agent at the rollout's base URL, resolve its turns with the trainer's engine (``generate``, a
``serve_requests`` handler) or leave them to the gateway's own backend (``backend="vllm"``…),
finish with the reward, and hand back the samples, one per chain.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import os
import subprocess
from typing import Any, Awaitable, Callable, Mapping, Sequence

from ..client import Handler, RollgateClient
from ..schema import Rollout, Sample

__all__ = ["AgentRollout", "Launcher", "agent_env", "cli_launcher", "resolve_callable"]

#: Runs the agent on ``task`` against ``rollout`` to its end and returns its exit code. Cancelling
#: it must stop the agent (``cli_launcher`` terminates the process).
Launcher = Callable[[Rollout, Any], Awaitable[int]]


def resolve_callable(value: Any) -> Any:
    """A callable, or the dotted path ``package.module.name`` of one (as configs and environment
    variables name a launcher or a reward function)."""
    if not value or callable(value):
        return value or None
    module, _, name = str(value).rpartition(".")
    return getattr(importlib.import_module(module), name)


def agent_env(rollout: Rollout) -> dict[str, str]:
    """Environment variables that point the common CLIs at the rollout (README, "Pointing the
    agents at rollgate"): Anthropic's and OpenAI's SDK variables and ``ROLLGATE_*``."""
    return {
        "ANTHROPIC_BASE_URL": rollout.anthropic_base_url,
        "ANTHROPIC_AUTH_TOKEN": rollout.token,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "OPENAI_BASE_URL": rollout.openai_base_url,
        "OPENAI_API_KEY": rollout.token,
        "ROLLGATE_BASE_URL": rollout.base_url,
        "ROLLGATE_TOKEN": rollout.token,
    }


def cli_launcher(
    argv: Sequence[str] | Callable[[Rollout, Any], Sequence[str]],
    *,
    env: Mapping[str, str] | Callable[[Rollout, Any], Mapping[str, str]] | None = None,
    cwd: str | None = None,
    kill_after: float = 5.0,
) -> Launcher:
    """A ``Launcher`` that runs a CLI (stdin from ``/dev/null``) with ``agent_env(rollout)`` and
    ``env`` on top (either may be a function of the rollout and the task); cancelling it
    terminates the process (killed after ``kill_after`` s)."""

    async def launch(rollout: Rollout, task: Any) -> int:
        args = list(argv(rollout, task) if callable(argv) else argv)
        extra = env(rollout, task) if callable(env) else (env or {})
        proc = await asyncio.create_subprocess_exec(
            *args,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **agent_env(rollout), **extra},
            cwd=cwd,
        )
        try:
            return await proc.wait()
        except asyncio.CancelledError:
            if proc.returncode is None:
                proc.terminate()
                try:
                    await asyncio.wait_for(proc.wait(), kill_after)
                except asyncio.TimeoutError:
                    proc.kill()
                    await proc.wait()
            raise

    return launch


class AgentRollout:
    """A rollout with its agent running: ``await start(...)``, ``await wait()``, ``await finish()``.

    ``generate`` resolves the rollout's turns (a ``serve_requests`` handler: ``PendingRequest`` →
    ``Completion``); without it the rollout's backend answers them (``create["backend"]``, a backend
    the gateway was started with). Every wait has an end: ``wait(timeout)`` raises
    ``asyncio.TimeoutError`` and leaves the agent running, ``finish`` stops it if it still runs.
    """

    def __init__(
        self,
        client: RollgateClient,
        rollout: Rollout,
        agent: asyncio.Task,
        serving: asyncio.Task | None,
        stop: asyncio.Event,
    ) -> None:
        self.client = client
        self.rollout = rollout
        self._agent = agent
        self._serving = serving
        self._stop = stop
        self.exit_code: int | None = None
        self.timed_out = False
        self.samples: list[Sample] | None = None
        #: The reward the rollout was finished with.
        self.reward: float | None = None

    @classmethod
    async def start(
        cls,
        client: RollgateClient,
        launch: Launcher,
        *,
        task: Any = None,
        generate: Handler | None = None,
        concurrency: int = 4,
        lease: float = 60.0,
        **create: Any,
    ) -> "AgentRollout":
        """Creates the rollout (``create``: ``create_rollout``'s arguments) and launches the agent."""
        rollout = await client.create_rollout(**create)
        stop = asyncio.Event()
        serving = None
        if generate is not None:
            serving = asyncio.ensure_future(
                client.serve_requests(generate, concurrency=concurrency, rollout=rollout.id, stop_event=stop, lease=lease)
            )
        agent = asyncio.ensure_future(launch(rollout, task))
        return cls(client, rollout, agent, serving, stop)

    async def wait(self, timeout: float | None = None) -> int:
        """The agent's exit code once it ends; ``asyncio.TimeoutError`` after ``timeout`` s."""
        try:
            self.exit_code = await asyncio.wait_for(asyncio.shield(self._agent), timeout)
        except asyncio.TimeoutError:
            self.timed_out = True
            raise
        return self.exit_code

    async def _stop_agent(self) -> None:
        if not self._agent.done():
            self._agent.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            result = await asyncio.gather(self._agent, return_exceptions=True)
            if self.exit_code is None and isinstance(result[0], int):
                self.exit_code = result[0]
        self._stop.set()
        if self._serving is not None:
            await self._serving

    async def finish(self, reward: float | None = None, weight_version: Any = None) -> list[Sample]:
        """Stops the agent if it still runs and the request workers, finishes the rollout with
        ``reward`` and returns its samples (one per chain)."""
        await self._stop_agent()
        self.reward = reward
        self.samples = await self.client.finish_rollout(self.rollout.id, reward, weight_version=weight_version)
        return self.samples

    async def complete(
        self, timeout: float | None = None, reward_fn: Callable[[Any, "AgentRollout"], Any] | None = None, task: Any = None
    ) -> list[Sample]:
        """Waits for the agent (past ``timeout`` it is stopped: the turns so far still train),
        scores the run with ``reward_fn(task, run)`` (a value or an awaitable; none: no reward)
        and finishes; on any failure the rollout is abandoned and the error raised."""
        try:
            try:
                await self.wait(timeout)
            except asyncio.TimeoutError:
                pass
            reward = None
            if reward_fn is not None:
                reward = reward_fn(task, self)
                if inspect.isawaitable(reward):
                    reward = await reward
            return await self.finish(reward)
        except BaseException:
            await asyncio.shield(self.abandon())
            raise

    async def reward_turn(self, turn: str | int, reward: float) -> dict[str, Any]:
        """One recorded turn's reward (by id, or index in arrival order): a ``reward_fn`` that
        gives credit per step posts them before returning the rollout's reward."""
        return await self.client.reward_turn(self.rollout.id, turn, reward)

    async def calls(self) -> dict[str, Any]:
        """The finished rollout's ``?form=calls`` export."""
        return await self.client.sample_calls(self.rollout.id)

    async def abandon(self) -> None:
        """Stops the agent and deletes the rollout (a failed run: nothing of it is trained)."""
        await self._stop_agent()
        with contextlib.suppress(Exception):
            await self.client.delete_rollout(self.rollout.id)
