"""Group-relative advantages (GRPO and its kin) computed per rollout, not per sample.

A rollout can yield several samples (a sub-agent, a compaction, a rewrite: one per chain). They
are parts of one attempt, not attempts of their own: normalising over samples would count a
rollout with three chains three times in its group's mean and spread. So the baseline is taken
over the *rollouts* of a group (``POST /api/rollouts`` ``group``, carried by every sample), and
every sample of a rollout gets its rollout's advantage.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Iterable, Mapping


def _field(sample: Any, name: str) -> Any:
    if isinstance(sample, Mapping):
        return sample.get(name)
    value = getattr(sample, name, None)
    if value is None and hasattr(sample, "extra"):
        value = sample.extra.get(name)
    return value


def rollout_rewards(samples: Iterable[Any], reward_mode: str = "full") -> dict[str, float]:
    """Each rollout's reward from its samples: the reward they carry (``reward_mode`` ``full``,
    the gateway's default) or its sum (``split``: the gateway divided it among them)."""
    rewards: dict[str, float] = {}
    for s in samples:
        rid, reward = _field(s, "rollout_id"), _field(s, "reward")
        if reward is None:
            raise ValueError(f"rollout {rid} has a sample without a reward")
        if reward_mode == "split":
            rewards[rid] = rewards.get(rid, 0.0) + reward
        else:
            rewards[rid] = reward
    return rewards


def group_advantages(
    samples: Iterable[Any],
    *,
    reward_mode: str = "full",
    normalize_std: bool = True,
    eps: float = 1e-6,
) -> dict[str, float]:
    """Advantage per rollout id: its reward minus its group's mean over rollouts (divided by the
    group's standard deviation with ``normalize_std``). Rollouts without a group are a group each.

    >>> samples = [
    ...     {"rollout_id": "a", "group": "t1", "reward": 1.0},
    ...     {"rollout_id": "a", "group": "t1", "reward": 1.0},  # a's sub-agent chain
    ...     {"rollout_id": "b", "group": "t1", "reward": 0.0},
    ... ]
    >>> group_advantages(samples, normalize_std=False)
    {'a': 0.5, 'b': -0.5}
    """
    samples = list(samples)
    rewards = rollout_rewards(samples, reward_mode)
    group_of = {_field(s, "rollout_id"): _field(s, "group") or _field(s, "rollout_id") for s in samples}
    members: dict[str, list[str]] = defaultdict(list)
    for rid, group in group_of.items():
        members[group].append(rid)
    out: dict[str, float] = {}
    for rids in members.values():
        values = [rewards[r] for r in rids]
        mean = sum(values) / len(values)
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        for r in rids:
            out[r] = (rewards[r] - mean) / (std + eps) if normalize_std else rewards[r] - mean
    return out


def sample_advantages(samples: Iterable[Any], **options: Any) -> list[float]:
    """Each sample's advantage (its rollout's), in order."""
    samples = list(samples)
    per_rollout = group_advantages(samples, **options)
    return [per_rollout[_field(s, "rollout_id")] for s in samples]
