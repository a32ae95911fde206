"""A rollout's samples as the rows and calls trainers take, shared by every adapter.

One rollout can have several chains (a sub-agent, a compaction, a rewrite or retry fork): the
gateway gives one sample per chain, and every sampled id carries loss in exactly one of them. The
adapters keep that: one row per chain (``chain_rows``) or one call per LLM call with the loss where
a sample trains it (``trained_calls``), never a row that trains an id twice, and every row keeps its
``rollout_id`` and ``group`` so the trainer baselines over rollouts and broadcasts one advantage to
a rollout's rows (see ``rollgate_client.groups``).

Logprobs: a trained position whose logprob the engine did not report is ``None`` (and the sample
names its turn in ``logprobs_absent``). An importance-ratio loss (PPO, GRPO with a clipped ratio) computed against a
made-up value trains on noise, so ``missing_logprobs`` decides, per adapter:

- ``"refuse"`` (default): raise ``MissingLogprobsError`` naming the rollout, sample and turns;
- ``"recompute"``: no row carries rollout logprobs; the trainer recomputes the old policy's
  (verl's actor, slime's actor without ``--use-rollout-logprobs``);
- ``"context"``: the turns without logprobs stay in the sequence as context (loss 0), named in the
  row's ``metadata["logprobs_absent_turns"]`` (OpenEnv's convention for rejected logprobs).

The third round of sample fields rides along: teacher logprobs (on-policy distillation), rewards
per turn and kept-token sets. A trained turn its teacher gave no score for (``teacher_missing``)
is refused the same way (``missing_teacher="refuse"``, ``MissingTeacherError``), or kept as
context (``"context"``: loss 0, named in ``metadata["teacher_missing_turns"]``): a distillation
loss against a made-up teacher logprob trains toward noise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from ..sample_forms import _kept_sets, _values, routed_experts_rows
from ..schema import Sample

__all__ = [
    "MISSING_LOGPROBS_MODES",
    "ChainRow",
    "MissingLogprobsError",
    "MissingTeacherError",
    "TrainedCall",
    "chain_rows",
    "check_missing_logprobs_mode",
    "trained_calls",
]

MISSING_LOGPROBS_MODES = ("refuse", "recompute", "context")


class MissingLogprobsError(ValueError):
    """A trained position has no logprob: an importance-ratio loss would use a made-up value."""

    def __init__(self, rollout_id: Any, sample_index: Any, branch: Any, turns: Sequence[str]) -> None:
        super().__init__(
            f"rollout {rollout_id} sample {sample_index} ({branch}): turns {', '.join(turns)} have trained "
            "ids without logprobs; the engine did not report them. Complete with logprobs, or pass "
            "missing_logprobs='recompute' (the trainer recomputes them) or 'context' (train nothing there)"
        )
        self.rollout_id = rollout_id
        self.sample_index = sample_index
        self.turns = list(turns)


class MissingTeacherError(ValueError):
    """A trained position has no teacher logprob: a distillation loss would use a made-up one."""

    def __init__(self, rollout_id: Any, sample_index: Any, missing: Sequence[Mapping[str, Any]]) -> None:
        reasons = "; ".join(f"{m['turn']}: {m.get('reason')}" for m in missing)
        super().__init__(
            f"rollout {rollout_id} sample {sample_index}: the teacher gave no logprobs for trained turns "
            f"({reasons}). Pass missing_teacher='context' to keep them as context (loss 0)"
        )
        self.rollout_id = rollout_id
        self.sample_index = sample_index
        self.turns = [str(m["turn"]) for m in missing]


def check_missing_logprobs_mode(mode: str, allowed: Sequence[str], what: str = "missing_logprobs") -> None:
    """Raises for a mode the calling adapter's trainer cannot honour."""
    if mode not in allowed:
        raise ValueError(f"{what} must be one of {', '.join(map(repr, allowed))}, not {mode!r}")


@dataclass
class ChainRow:
    """One chain of a rollout as a prompt and a response, as verl and slime take a row.

    ``prompt_ids`` are the ids before the chain's first trained id; ``response_ids`` the rest,
    ``response_mask`` 1 exactly where this chain trains an id (tool output, bridges and a fork's
    shared prefix are 0), ``response_logprobs`` aligned with ``response_ids`` (0.0 off the mask;
    ``None`` under ``missing_logprobs="recompute"``), ``routed_experts`` the MoE rows of positions
    ``0 … len(prompt_ids) + len(response_ids) − 2`` when the sample has them.
    """

    sample: Sample
    prompt_ids: list[int]
    response_ids: list[int]
    response_mask: list[int]
    response_logprobs: list[float] | None
    routed_experts: list[list[list[int]]] | None
    #: Weight version of each turn whose output this row trains, in order.
    weight_versions: list[Any]
    metadata: dict[str, Any] = field(default_factory=dict)
    #: The teacher's logprob at each of ``input_ids`` this row trains, ``None`` elsewhere; ``None``
    #: when the rollout has no teacher.
    teacher_logprobs: list[float | None] | None = None
    #: The reward posted for each turn whose output this row trains (``None``: none posted), in
    #: the order of ``weight_versions``; ``None`` when the rollout has no per-turn rewards.
    turn_rewards: list[float | None] | None = None
    #: The kept set of each of ``response_ids`` (empty where nothing was sampled), when the
    #: sample has kept sets.
    kept_sets: list[list[int]] | None = None

    @property
    def input_ids(self) -> list[int]:
        return self.prompt_ids + self.response_ids

    @property
    def num_turns(self) -> int:
        return len(self.sample.turns)


def _trained_turns(spans: Iterable[Mapping[str, Any]], positions: Iterable[int]) -> list[str]:
    """The turns whose output span holds one of ``positions``, in order."""
    wanted = set(positions)
    out = []
    for span in spans:
        if any(span["output_start"] <= p < span["end"] for p in wanted):
            out.append(str(span["turn"]))
    return out


def _missing(logprob: Any) -> bool:
    """An absent logprob: ``None`` in JSON, NaN in the float64 id transport."""
    return logprob is None or logprob != logprob


def _absent_positions(sample: Sample) -> list[int]:
    """Trained positions without a logprob: ``None`` in ``logprobs``, or inside a turn the sample
    names in ``logprobs_absent``."""
    named = set(sample.logprobs_absent or [])
    spans = {str(s["turn"]): s for s in sample.turn_spans}
    out = []
    for i, (m, lp) in enumerate(zip(sample.loss_mask, sample.logprobs)):
        if m and _missing(lp):
            out.append(i)
    for turn in named:
        span = spans.get(str(turn))
        if span is not None:
            out += [i for i in range(span["output_start"], span["end"]) if sample.loss_mask[i]]
    return sorted(set(out))


def _mask_turns(mask: list[int], spans: Iterable[Mapping[str, Any]], turns: Iterable[str]) -> None:
    """Loss 0 over the outputs of ``turns``."""
    names = set(map(str, turns))
    for span in spans:
        if str(span["turn"]) in names:
            mask[span["output_start"] : span["end"]] = [0] * (span["end"] - span["output_start"])


def chain_rows(
    samples: Iterable[Sample], *, missing_logprobs: str = "refuse", missing_teacher: str = "refuse"
) -> list[ChainRow]:
    """One row per sample that trains an id (a chain whose every turn is stale or unlabelled for
    training adds nothing to a loss and is left out; ``len(samples) - len(rows)`` says how many)."""
    check_missing_logprobs_mode(missing_logprobs, MISSING_LOGPROBS_MODES)
    check_missing_logprobs_mode(missing_teacher, ("refuse", "context"), "missing_teacher")
    rows = []
    for sample in samples:
        mask = list(sample.loss_mask)
        metadata: dict[str, Any] = {}
        if sample.teacher_missing:
            if missing_teacher == "refuse":
                raise MissingTeacherError(sample.rollout_id, sample.index, sample.teacher_missing)
            _mask_turns(mask, sample.turn_spans, (m["turn"] for m in sample.teacher_missing))
            metadata["teacher_missing_turns"] = [str(m["turn"]) for m in sample.teacher_missing]
        absent = _absent_positions(sample)
        if absent:
            turns = _trained_turns(sample.turn_spans, absent)
            if missing_logprobs == "refuse":
                raise MissingLogprobsError(sample.rollout_id, sample.index, sample.branch, turns)
            if missing_logprobs == "context":
                _mask_turns(mask, sample.turn_spans, turns)
                metadata["logprobs_absent_turns"] = turns
        if not any(mask):
            continue
        start = mask.index(1)
        logprobs = None
        if missing_logprobs != "recompute":
            logprobs = [0.0 if not m or _missing(lp) else lp for m, lp in zip(mask[start:], sample.logprobs[start:])]
        experts = routed_experts_rows(sample.routed_experts) if sample.routed_experts else None
        trained = [s for s in sample.turn_spans if any(mask[s["output_start"] : s["end"]])]
        versions = [s.get("weight_version") for s in trained]
        teacher = None
        if sample.teacher_logprobs is not None:
            teacher = [lp if m and not _missing(lp) else None for m, lp in zip(mask, sample.teacher_logprobs)]
        kept = sample.kept_sets
        rows.append(
            ChainRow(
                sample=sample,
                prompt_ids=list(sample.input_ids[:start]),
                response_ids=list(sample.input_ids[start:]),
                response_mask=mask[start:],
                response_logprobs=logprobs,
                routed_experts=experts,
                weight_versions=versions,
                metadata=metadata,
                teacher_logprobs=teacher,
                turn_rewards=None if sample.turn_rewards is None else [s.get("reward") for s in trained],
                kept_sets=None if kept is None else kept[start:],
            )
        )
    return rows


@dataclass
class TrainedCall:
    """One LLM call as the engine saw it, with the loss this rollout puts on its output.

    ``loss_mask`` covers ``prompt_ids + output_ids``: 0 over the prompt, and over the output 1
    exactly where a sample of the rollout trains the id (the ``trained_by`` of ``?form=calls``).
    """

    turn: str
    chain: int | None
    prompt_ids: list[int]
    output_ids: list[int]
    logprobs: list[float]
    loss_mask: list[int]
    weight_version: Any
    #: The sample (chain) this call is listed under: the first whose path holds it.
    sample_index: int
    branch: str
    metadata: dict[str, Any] = field(default_factory=dict)
    #: With a teacher: its logprob of each output id a sample trains, ``None`` elsewhere.
    teacher_logprobs: list[float | None] | None = None
    #: The reward posted for this call's turn, when the rollout has per-turn rewards.
    reward: float | None = None
    #: Each output id's kept set, when the call has them.
    kept_sets: list[list[int]] | None = None


def trained_calls(
    export: Mapping[str, Any], *, missing_logprobs: str = "refuse", missing_teacher: str = "refuse"
) -> list[TrainedCall]:
    """A ``?form=calls`` export as one ``TrainedCall`` per call, chain after chain.

    Calls come in the order of the samples (index order) and, within a sample, of its turns; a
    call shared by several samples (a fork's prefix) comes once, under the first. So a consumer
    that rebuilds rows by prefix (TRL's ``HarnessRolloutWorker``) sees each chain's calls extend
    each other and starts a new row at each chain: one row per chain, as the gateway's samples.
    ``missing_logprobs``: ``"refuse"`` or ``"context"`` (a call without logprobs keeps loss 0);
    ``missing_teacher`` the same for a trained call its teacher gave no logprobs for.
    """
    check_missing_logprobs_mode(missing_logprobs, ("refuse", "context"))
    check_missing_logprobs_mode(missing_teacher, ("refuse", "context"), "missing_teacher")
    encoded = export.get("ids_encoding") == "base64"
    by_turn = {str(c["turn"]): c for c in export["calls"]}
    out: list[TrainedCall] = []
    seen: set[str] = set()
    for head in sorted(export["samples"], key=lambda s: s["index"]):
        for turn in head.get("turns") or []:
            turn = str(turn)
            if turn in seen or turn not in by_turn:
                continue
            seen.add(turn)
            call = by_turn[turn]
            prompt = _values(call, "prompt_ids", encoded)
            output = _values(call, "output_ids", encoded)
            owners = _values(call, "trained_by", encoded)
            logprobs = _values(call, "logprobs", encoded)
            loss = [1 if owner >= 0 else 0 for owner in owners]
            metadata: dict[str, Any] = {"chain": call.get("chain"), "branch": head.get("branch")}
            named = head.get("logprobs_absent") or []
            if turn in map(str, named) or any(m and _missing(lp) for m, lp in zip(loss, logprobs)):
                if missing_logprobs == "refuse":
                    raise MissingLogprobsError(head.get("rollout_id"), head["index"], head.get("branch"), [turn])
                loss = [0] * len(loss)
                metadata["logprobs_absent_turns"] = [turn]
            teacher = _values(call, "teacher_logprobs", encoded) if "teacher_logprobs" in call else None
            lacking = [m for m in head.get("teacher_missing") or [] if str(m["turn"]) == turn]
            if lacking and any(loss):
                if missing_teacher == "refuse":
                    raise MissingTeacherError(head.get("rollout_id"), head["index"], lacking)
                loss = [0] * len(loss)
                metadata["teacher_missing_turns"] = [turn]
            kept = _kept_sets(call, encoded)
            out.append(
                TrainedCall(
                    turn=turn,
                    chain=call.get("chain"),
                    prompt_ids=prompt,
                    output_ids=output,
                    logprobs=[0.0 if _missing(lp) else lp for lp in logprobs],
                    loss_mask=[0] * len(prompt) + loss,
                    weight_version=call.get("weight_version"),
                    sample_index=head["index"],
                    branch=str(head.get("branch")),
                    metadata=metadata,
                    teacher_logprobs=None
                    if teacher is None
                    else [lp if m and not _missing(lp) else None for m, lp in zip(loss, teacher)],
                    reward=call.get("reward"),
                    kept_sets=kept,
                )
            )
    return out
