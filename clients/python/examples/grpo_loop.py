#!/usr/bin/env python3
"""A GRPO-style training loop over rollgate (standard library only).

For every task: create K rollouts (a *group*), launch K agents against them, serve their LLM
turns, finish each rollout with a reward, and turn the samples into a batch with group-normalized
advantages

    advantage = (reward - mean(group rewards)) / (std(group rewards) + eps)

that every sample of a rollout shares (a rollout whose agent rewrote its history yields more than
one sample; all carry the rollout's reward).

Three pieces plug in:

* ``launch_agent(rollout, task)``: runs one agent to completion. The default is a one-turn OpenAI
  Chat client so the loop runs anywhere; a real harness (Claude Code, Codex, pi in a sandbox, see
  the repo's ``harness/``) goes here, configured with ``rollout.base_url`` and ``rollout.token``.
* ``generate(pending) -> Completion``: your inference engine answering the turns. ``--vllm`` uses
  the ``VLLMBackend`` of ``vllm_gate_worker.py``; without it a tiny *demo policy* answers
  "Hello" or "Hi" at random (real Qwen3 ids) so the loop can be tried with no GPU.
* ``reward_fn(task, result) -> float``: the verifier. The default compares the agent's final text
  with ``task["answer"]``.

    python3 grpo_loop.py --gateway http://127.0.0.1:7860 --group-size 4          # demo policy
    python3 grpo_loop.py --vllm http://127.0.0.1:8000 --model Qwen/Qwen3-8B --tasks tasks.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import statistics
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Iterable

try:
    from rollgate_client import Completion, PendingRequest, Rollout, RollgateClient, Sample
except ImportError:  # running from a checkout without installing: clients/python is one level up
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from rollgate_client import Completion, PendingRequest, Rollout, RollgateClient, Sample

log = logging.getLogger("grpo_loop")

Task = dict  # {"id": str, "prompt": str, "answer": str, ...}: whatever your launcher and verifier need


@dataclass
class AgentResult:
    """What ``launch_agent`` reports back to the verifier."""

    final_text: str | None = None
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


LaunchAgent = Callable[[Rollout, Task], Awaitable[AgentResult]]
RewardFn = Callable[[Task, AgentResult], float]
Generate = Callable[[PendingRequest], Awaitable[Completion]]


# -- pluggable pieces -------------------------------------------------------------------------------


async def launch_agent(rollout: Rollout, task: Task) -> AgentResult:
    """Runs one agent against ``rollout`` and returns its outcome.

    THIS IS WHERE A HARNESS PLUGS IN. A coding agent runs in its sandbox with its base URL pointed
    at the rollout, e.g. Claude Code with ``ANTHROPIC_BASE_URL=rollout.base_url`` and
    ``ANTHROPIC_AUTH_TOKEN=rollout.token``; Codex/pi with ``rollout.openai_base_url`` (see the
    repository README, "Agents"). Await the process, then collect what the
    verifier needs (the workspace diff, test results, the final message).

    The default below is the smallest possible agent: one OpenAI Chat call with the task's prompt
    (``urllib`` in a thread; it blocks until the trainer answered the turn).
    """
    body = json.dumps({
        "model": "policy",
        "messages": [{"role": "user", "content": task["prompt"]}],
        "stream": False,
    }).encode()
    req = urllib.request.Request(
        rollout.openai_base_url + "/chat/completions",
        data=body,
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {rollout.token}"},
        method="POST",
    )

    def call() -> AgentResult:
        try:
            with urllib.request.urlopen(req, timeout=600) as r:
                data = json.load(r)
            return AgentResult(final_text=data["choices"][0]["message"].get("content") or "")
        except urllib.error.HTTPError as e:
            return AgentResult(error=f"HTTP {e.code}: {e.read()[:300].decode(errors='replace')}")
        except OSError as e:
            return AgentResult(error=repr(e))

    return await asyncio.to_thread(call)


def reward_fn(task: Task, result: AgentResult) -> float:
    """1.0 when the agent's final text is the expected answer, else 0.0 (replace with your verifier:
    run the task's tests in the sandbox, grade the diff, ...)."""
    if result.error or result.final_text is None:
        return 0.0
    return 1.0 if result.final_text.strip() == str(task.get("answer", "")).strip() else 0.0


def demo_policy(
    seed: int | None = None, weight_version: int | str | None = 0, names: dict[str, str] | None = None,
) -> Generate:
    """A stand-in for the policy: answers every turn with "Hello" or "Hi" (real Qwen3 ids of
    ``Hello<|im_end|>`` / ``Hi<|im_end|>``) and their logprobs under a 50/50 choice.

    With ``names`` (rollout id -> a name stable across runs, as ``run_group`` fills it) each
    choice is drawn from ``seed`` and the rollout's name, so a run with the same seed answers the
    same whatever order the concurrent turns arrive in; without it, from one stream seeded once.
    """
    shared = random.Random(seed)
    replies = [[9707, 151645], [13048, 151645]]

    async def generate(pending: PendingRequest) -> Completion:
        name = names.get(pending.rollout_id) if names is not None else None
        rng = random.Random(f"{seed}/{name}/{len(pending.prompt_ids)}") if name else shared
        ids = rng.choice(replies)[: max(1, pending.max_tokens or 2)]
        return Completion(
            output_ids=ids,
            logprobs=[-0.6931, -0.0001][: len(ids)],
            finish_reason="stop" if ids[-1] == 151645 else "length",
            weight_version=weight_version,
        )

    return generate


# -- GRPO ---------------------------------------------------------------------------------------


def group_advantages(rewards: list[float], eps: float = 1e-6) -> list[float]:
    """(r - mean) / (std + eps) over one group; population std (a group of one gets 0)."""
    if len(rewards) < 2:
        return [0.0 for _ in rewards]
    mean = statistics.fmean(rewards)
    std = statistics.pstdev(rewards)
    return [(r - mean) / (std + eps) for r in rewards]


@dataclass
class ScoredSample:
    sample: Sample
    reward: float
    advantage: float
    group: str


async def run_group(
    client: RollgateClient,
    task: Task,
    *,
    group_size: int,
    launch: LaunchAgent = launch_agent,
    reward: RewardFn = reward_fn,
    step: int = 0,
    names: dict[str, str] | None = None,
) -> list[ScoredSample]:
    """One GRPO group: K rollouts of ``task``, rewarded, finished, advantages assigned. ``names``
    gets each rollout's id -> ``<group>.m<member>`` (what the demo policy seeds from)."""
    group = f"{task['id']}.s{step}"
    rollouts = [
        await client.create_rollout(metadata={"task": task["id"], "group": group, "member": i, "step": step})
        for i in range(group_size)
    ]
    if names is not None:
        names.update({r.id: f"{group}.m{i}" for i, r in enumerate(rollouts)})
    outcomes = await asyncio.gather(*(launch(r, task) for r in rollouts), return_exceptions=True)
    rewards: list[float] = []
    per_rollout: list[list[Sample]] = []
    for r, outcome in zip(rollouts, outcomes):
        result = outcome if isinstance(outcome, AgentResult) else AgentResult(error=repr(outcome))
        value = float(reward(task, result))
        rewards.append(value)
        # finish: no more turns for this rollout (pending ones fail), and its samples with the reward.
        per_rollout.append(await client.finish_rollout(r.id, reward=value))
    advantages = group_advantages(rewards)
    log.info("group %s rewards %s advantages %s", group, rewards, [round(a, 3) for a in advantages])
    return [
        ScoredSample(s, rew, adv, group)
        for samples, rew, adv in zip(per_rollout, rewards, advantages)
        for s in samples
    ]


def to_trainer_batch(scored: Iterable[ScoredSample]) -> dict[str, list[Any]]:
    """Columns a policy-gradient update needs, one row per sample.

    * ``input_ids``: the whole chain (prompt, every sampled turn, tool results in between).
    * ``loss_mask``: 1 exactly on the ids the policy sampled (tool output, user text and
      template tokens are 0). Per-token advantage = ``advantages[i] * loss_mask[i][t]``.
    * ``logprobs``: the behaviour policy's logprobs aligned with ``input_ids`` (0 off the mask):
      the "old" logprobs of the PPO/GRPO ratio, or for a vLLM/trainer mismatch correction.
    * ``advantages``: the group-normalized scalar of the sample's rollout.

    Where the batch goes:

    * A plain PyTorch/FSDP/Megatron trainer: pad the rows, forward ``input_ids``, take the new
      logprobs of each next token, ``ratio = exp(new - logprobs)``, clipped surrogate
      ``-min(ratio * A, clip(ratio) * A)``, averaged over ``loss_mask``.
    * slime, as a custom generate function (``--custom-generate-function-path``): for its
      ``Sample`` set ``tokens = input_ids``, ``response_length = len(input_ids) - prompt_length``,
      ``loss_mask = loss_mask[prompt_length:]``, ``rollout_log_probs = logprobs[prompt_length:]``,
      ``reward = rewards[i]`` (status TRUNCATED when ``finish_reason == "length"``); slime then
      computes the GRPO advantages itself over ``n_samples_per_prompt``, so ``advantages`` here is
      only for trainers that take them precomputed.
    * TRL's ``GRPOTrainer`` with a custom rollout function (``rollout_func``, in the TRL versions
      that have it): return per generation ``prompt_ids = input_ids[:prompt_length]``,
      ``completion_ids = input_ids[prompt_length:]``, ``logprobs = logprobs[prompt_length:]`` and
      the reward as an extra field read by a reward function; the non-sampled ids inside the
      completion (tool results) must be masked out with ``loss_mask[prompt_length:]`` where your
      TRL version accepts such a mask. TRL normalizes rewards per group itself.
    * OpenEnv: the sandboxed agent *is* the environment. ``reset()`` creates a rollout and
      launches the agent, the episode ends when it exits, the env's verifier gives the reward
      (``reward_fn`` here) and rollgate's samples replace a proxy-recorded trace.
    """
    batch: dict[str, list[Any]] = {
        "input_ids": [], "loss_mask": [], "logprobs": [], "advantages": [],
        "rewards": [], "prompt_lengths": [], "finish_reasons": [], "rollout_ids": [], "groups": [],
    }
    for s in scored:
        batch["input_ids"].append(s.sample.input_ids)
        batch["loss_mask"].append(s.sample.loss_mask)
        batch["logprobs"].append(s.sample.logprobs)
        batch["advantages"].append(s.advantage)
        batch["rewards"].append(s.reward)
        batch["prompt_lengths"].append(s.sample.prompt_length)
        batch["finish_reasons"].append(s.sample.finish_reason)
        batch["rollout_ids"].append(s.sample.rollout_id)
        batch["groups"].append(s.group)
    return batch


async def update_policy(client: RollgateClient, batch: dict[str, list[Any]], step: int, *, sync_weights: bool) -> None:
    """The trainer's step. Replace the log line with your optimizer step and weight push.

    Synchronous GRPO finishes every rollout before updating, so nothing is in flight. When agents
    keep running across updates (asynchronous RL), hold new turns during the weight swap:
    ``pause()`` (new turns wait in the gateway), ``drain()`` (turns already handed out finish;
    the serving workers keep answering them), swap weights, ``resume()``. Completions carry a
    ``weight_version`` so each turn records which policy produced it.
    """
    tokens = sum(sum(m) for m in batch["loss_mask"])
    log.info("step %d: %d samples, %d trained tokens, mean reward %.3f",
             step, len(batch["input_ids"]), tokens, statistics.fmean(batch["rewards"]) if batch["rewards"] else 0.0)
    if sync_weights:
        await client.pause()
        await client.drain(timeout=600)
        # ... push the new weights to the inference engine here ...
        await client.resume()


async def train(
    client: RollgateClient,
    tasks: list[Task],
    *,
    group_size: int = 4,
    steps: int = 1,
    generate: Generate | None = None,
    launch: LaunchAgent = launch_agent,
    reward: RewardFn = reward_fn,
    concurrency: int = 8,
    sync_weights: bool = False,
    poll_wait: float = 2.0,
    names: dict[str, str] | None = None,
) -> list[dict[str, list[Any]]]:
    """Runs ``steps`` GRPO steps over ``tasks``; returns the batches (one per step). ``names``:
    see ``run_group``."""
    stop = asyncio.Event()
    server = asyncio.ensure_future(
        client.serve_requests(generate or demo_policy(), concurrency=concurrency, stop_event=stop, poll_wait=poll_wait)
    )
    batches = []
    try:
        for step in range(steps):
            groups = await _unless_server_dies(server, asyncio.gather(*(
                run_group(client, t, group_size=group_size, launch=launch, reward=reward, step=step, names=names)
                for t in tasks
            )))
            batch = to_trainer_batch(s for g in groups for s in g)
            await update_policy(client, batch, step, sync_weights=sync_weights)
            batches.append(batch)
    finally:
        stop.set()
        stats = await server
        log.info("served: %s", stats)
    return batches


async def _unless_server_dies(server: asyncio.Future, work: Awaitable[Any]) -> Any:
    """Awaits ``work``; if the request server stops first (e.g. 401: wrong admin token), the agents
    would wait forever, so cancel the work and raise the server's error."""
    task = asyncio.ensure_future(work)
    await asyncio.wait({task, server}, return_when=asyncio.FIRST_COMPLETED)
    if not task.done():
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        server.result()  # raises the server's error
        raise RuntimeError("the request server stopped before the rollouts finished")
    return task.result()


# -- command line -----------------------------------------------------------------------------------

DEMO_TASKS: list[Task] = [
    {"id": "greet", "prompt": "Greet me with one word.", "answer": "Hello"},
    {"id": "hi", "prompt": "Say hi, one word.", "answer": "Hi"},
]


def load_tasks(path: str | None) -> list[Task]:
    if not path:
        return DEMO_TASKS
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="GRPO-style loop over rollgate: K rollouts per task, rewards, group-normalized advantages.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--gateway", default=os.environ.get("ROLLGATE_URL", "http://127.0.0.1:7860"), help="rollgate URL")
    p.add_argument("--admin-token", default=os.environ.get("ROLLGATE_ADMIN_TOKEN"), help="env ROLLGATE_ADMIN_TOKEN")
    p.add_argument("--tasks", help="JSONL file of tasks ({id, prompt, answer}); default: two demo tasks")
    p.add_argument("--group-size", type=int, default=4, help="K rollouts per task")
    p.add_argument("--steps", type=int, default=1)
    p.add_argument("--concurrency", type=int, default=8, help="turns generated at once")
    p.add_argument("--vllm", help="vLLM URL; default: the demo policy")
    p.add_argument("--model", help="model name served by vLLM (with --vllm)")
    p.add_argument("--seed", type=int, default=0, help="demo policy seed: the same seed, the same answers")
    p.add_argument("--sync-weights", action="store_true", help="pause/drain/resume around each update")
    p.add_argument("--poll-wait", type=float, default=2.0, help="long-poll length of the request workers, seconds")
    p.add_argument("--out", help="write the batches as JSON here")
    p.add_argument("-v", "--verbose", action="store_true", help="log everything (httpx's line per request too)")
    return p.parse_args(argv)


async def amain(args: argparse.Namespace) -> list[dict[str, list[Any]]]:
    backend = None
    names: dict[str, str] = {}
    if args.vllm:
        if not args.model:
            raise SystemExit("--vllm needs --model")
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from vllm_gate_worker import EngineError, VLLMBackend

        backend = VLLMBackend(args.vllm, args.model)
        try:
            await backend.probe()
        except EngineError as e:
            await backend.close()
            raise SystemExit(f"grpo_loop: {e}") from None
        generate: Generate = backend.generate
    else:
        generate = demo_policy(args.seed, names=names)
    try:
        async with RollgateClient(args.gateway, admin_token=args.admin_token) as client:
            batches = await train(
                client, load_tasks(args.tasks), group_size=args.group_size, steps=args.steps,
                generate=generate, concurrency=args.concurrency, sync_weights=args.sync_weights,
                poll_wait=args.poll_wait, names=names,
            )
    finally:
        if backend:
            await backend.close()
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(batches, f)
    return batches


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # Quiet by default: this loop's own lines and every warning; -v adds everything.
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    log.setLevel(logging.DEBUG if args.verbose else logging.INFO)
    asyncio.run(amain(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
