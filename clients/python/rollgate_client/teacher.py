"""The trainer as a teacher (on-policy distillation, a gateway started with ``--teacher
NAME=trainer``): the gateway hands out scoring requests, each a sequence exactly as the student
saw it (``input_ids``) and the ranges of it to score (``positions``: the student's sampled ids);
the trainer answers with its teacher model's logprob of the id at each position, given the ids
before it. Delivery is the generation requests': acknowledge at once, renew while working, or the
request is offered again; a failure is retried by the gateway and then named in the samples'
``teacher_missing``.

    async def score(req: TeacherRequest) -> list[float]:
        logits = teacher_model(req.input_ids)            # [len, vocab]
        return [log_softmax(logits[p - 1])[req.input_ids[p]] for p in req.scored_positions]

    await serve_teacher_requests(client, score, teacher="big", concurrency=2)
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping

from .client import RollgateClient, _seg, _sleep_or_stop
from .schema import RollgateError, decode_base64

__all__ = ["TeacherRequest", "next_teacher_request", "serve_teacher_requests"]

log = logging.getLogger("rollgate_client.teacher")


@dataclass
class TeacherRequest:
    """One scoring: score ``input_ids`` at every position of ``positions`` (``[start, end)``
    ranges, in order), one logprob each."""

    request_id: str
    rollout_id: str
    teacher: str
    turn_ids: list[str]
    input_ids: list[int]
    positions: list[list[int]]
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def scored_positions(self) -> list[int]:
        """Every position to score, in the order the answer lists them."""
        return [p for a, b in self.positions for p in range(a, b)]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "TeacherRequest":
        ids = data["input_ids"]
        if isinstance(ids, str):
            ids = decode_base64(ids, "i")
        known = {"request_id", "rollout_id", "teacher", "turn_ids", "input_ids", "positions", "ids_encoding"}
        return cls(
            request_id=data["request_id"],
            rollout_id=data["rollout_id"],
            teacher=data["teacher"],
            turn_ids=list(data.get("turn_ids") or []),
            input_ids=list(ids),
            positions=[list(r) for r in data["positions"]],
            extra={k: v for k, v in data.items() if k not in known},
        )


#: ``score(request)``: the teacher's logprob of each position of ``request.scored_positions``.
Scorer = Callable[[TeacherRequest], "list[float] | Awaitable[list[float]]"]


async def next_teacher_request(
    client: RollgateClient, wait: float, teacher: str | None = None, lease: float | None = None
) -> TeacherRequest | None:
    """``GET /api/teacher/requests/next``: the oldest unclaimed scoring (of ``teacher`` if given),
    waiting up to ``wait`` seconds; ``None`` when nothing came."""
    query: dict[str, Any] = {"wait": f"{max(0.0, min(float(wait), 300.0)):g}", "teacher": teacher, "ids": client.ids}
    if lease is not None:
        query["lease"] = f"{float(lease):g}"
    data = await client._call("GET", "/api/teacher/requests/next", query=query, timeout=client.timeout + wait)
    return TeacherRequest.from_json(data) if data else None


async def serve_teacher_requests(
    client: RollgateClient,
    score: Scorer,
    *,
    teacher: str | None = None,
    concurrency: int = 1,
    stop_event: asyncio.Event | None = None,
    poll_wait: float = 2.0,
    lease: float = 60.0,
) -> int:
    """Answers scoring requests with ``score`` until ``stop_event`` is set; returns how many were
    answered. Each request is acknowledged at once and renewed every third of ``lease`` while
    ``score`` runs; a ``score`` that raises fails the request (the gateway tries again)."""
    stop = stop_event or asyncio.Event()
    answered = 0

    async def worker() -> None:
        nonlocal answered
        while not stop.is_set():
            try:
                req = await next_teacher_request(client, poll_wait, teacher, lease)
            except (RollgateError, OSError, asyncio.TimeoutError) as e:
                if isinstance(e, RollgateError) and e.status in (401, 403):
                    raise
                log.warning("polling for teacher requests failed: %r", e)
                await _sleep_or_stop(stop, 1.0)
                continue
            if req is None:
                continue
            rid = _seg(req.request_id)
            try:
                await client._call("POST", f"/api/teacher/requests/{rid}/ack", {"lease": lease})
            except RollgateError as e:
                log.info("could not acknowledge teacher request %s: %s", req.request_id, e)
                continue
            work = asyncio.ensure_future(_scored(score, req))
            while True:
                done, _ = await asyncio.wait({work}, timeout=lease / 3)
                if done:
                    break
                try:
                    await client._call("POST", f"/api/teacher/requests/{rid}/renew", {"lease": lease})
                except RollgateError as e:  # withdrawn: the rollout is gone
                    log.info("teacher request %s: %s", req.request_id, e)
                    work.cancel()
                    break
            if work.cancelled():
                continue
            try:
                logprobs = work.result()
            except Exception as e:  # noqa: BLE001 - every scorer error goes back to the gateway
                await client._call("POST", f"/api/teacher/requests/{rid}/fail", {"error": str(e) or type(e).__name__})
                continue
            await client._call("POST", f"/api/teacher/requests/{rid}/complete", {"logprobs": [float(x) for x in logprobs]})
            answered += 1

    tasks = [asyncio.ensure_future(worker()) for _ in range(max(1, concurrency))]
    try:
        await asyncio.gather(*tasks)
    finally:
        for t in tasks:
            t.cancel()
    return answered


async def _scored(score: Scorer, req: TeacherRequest) -> list[float]:
    out = score(req)
    return list(await out) if inspect.isawaitable(out) else list(out)
