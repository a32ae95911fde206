"""``RollgateClient``: the trainer side of rollgate's API (``/api``), asyncio, standard library only.

    async with RollgateClient("http://127.0.0.1:7860") as client:
        rollout = await client.create_rollout(metadata={"task": "t1"})
        # ... start an agent with base_url=rollout.base_url, api key=rollout.token ...
        pending = await client.next_request(wait=30, rollout=rollout.id)
        if pending:
            await client.complete(pending.request_id, output_ids=[...], logprobs=[...])
        samples = await client.finish_rollout(rollout.id, reward=1.0)
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import sys
import uuid
from array import array
from types import EllipsisType
from typing import Any, AsyncIterator, Awaitable, Callable, Iterable, Mapping
from urllib.parse import quote

from .schema import (
    Completion,
    GatewayStatus,
    PendingRequest,
    Rollout,
    RollgateError,
    Sample,
    ServeStats,
)
from .http_client import open_http_client
from .prompt_cache import DEFAULT_MAX_IDS, PromptCache
from .transport import HTTPResponse, StreamError
from .tree import expand_compact_tree

__all__ = ["RollgateClient", "Handler"]

log = logging.getLogger("rollgate_client")

#: What ``serve_requests`` calls for every pending request.
Handler = Callable[[PendingRequest], Awaitable["Completion | Mapping[str, Any]"]]

#: Longest long poll the gateway accepts (it clamps larger values).
MAX_WAIT_S = 300.0

#: The lease ``serve_requests`` asks for; it renews at a third of it while the handler works.
DEFAULT_LEASE_S = 60.0
#: The lease ``serve_requests`` takes a request with (``next_request(ack=True)``), renewed to
#: ``lease`` at a third of it: a poll's lost answer then strands the request for no longer than
#: the gateway's ack timeout (10 s) would, and a turn shorter than a third of it costs no renewal.
FIRST_LEASE_S = 10.0
#: Tries of an ``ack`` whose answer did not arrive before the request is handled regardless.
ACK_ATTEMPTS = 3
#: Sends of a ``complete`` whose answer was lost (the gateway accepts it once and says ``resent``
#: to the sends after the one that landed), backing off 0.25 s, 0.5 s, … up to 4 s between them.
COMPLETE_ATTEMPTS = 6
#: Statuses a lost or refused-for-now call gets from a gateway or a balancer in front (retry them).
RETRY_STATUSES = (502, 503, 504)
#: A sample stream silent for this long (the gateway sends an empty line every 15 s) is reopened.
STREAM_IDLE_S = 60.0


def _seg(value: str) -> str:
    """One URL path segment (rollout ids may hold ``_ . : -``)."""
    return quote(str(value), safe=":")


def _error(resp: HTTPResponse) -> RollgateError:
    try:
        body = resp.json()
    except ValueError:
        body = None
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict):
        return RollgateError(resp.status, str(err.get("type") or "error"), str(err.get("message") or ""))
    if isinstance(err, str):
        return RollgateError(resp.status, "error", err)
    return RollgateError(resp.status, "http_error", resp.text[:500] or f"HTTP {resp.status}")


class RollgateClient:
    """Async client for the trainer API.

    ``admin_token`` (when the gateway runs with ``ROLLGATE_ADMIN_TOKEN``) is sent as
    ``Authorization: Bearer``. ``timeout`` bounds every call; a long poll gets ``wait`` on top.
    Errors of the API raise ``RollgateError(status, type, message)``; an unreachable gateway raises
    ``OSError`` (``ConnectionError``) and a call that takes too long ``asyncio.TimeoutError``.

    ``ids="base64"`` (the default) asks for the compact id transport on ``next_request``,
    ``samples`` and ``finish_rollout``: id arrays come as base64 of little-endian bytes, much
    cheaper for the gateway to write than JSON arrays, and are decoded here into the same lists.
    ``ids="json"`` asks for plain JSON arrays.

    ``prompts="delta"`` (the default) asks for each prompt as the ids after a request of its chain
    this client completed, and rebuilds the whole prompt from the ones it kept (at most
    ``prompt_cache_ids`` ids, a rollout's dropped when it is finished or deleted; one it lacks is
    fetched whole): a long chain's turn then costs what is new in it on the wire. Handlers and
    engines get the whole ``prompt_ids`` either way. ``prompts="full"`` asks for them whole.

    One client belongs to one event loop; it is safe to share between tasks of that loop.
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:7860",
        admin_token: str | None = None,
        *,
        timeout: float = 60.0,
        ids: str = "base64",
        prompts: str = "delta",
        prompt_cache_ids: int = DEFAULT_MAX_IDS,
    ) -> None:
        if ids not in ("base64", "json"):
            raise ValueError(f"ids must be 'base64' or 'json', not {ids!r}")
        if prompts not in ("delta", "full"):
            raise ValueError(f"prompts must be 'delta' or 'full', not {prompts!r}")
        self.ids = ids
        self.prompts = prompts
        #: Names this client to the gateway: a delta extends only a request it took.
        self.trainer_id = f"py-{uuid.uuid4().hex}"
        self.prompt_cache = PromptCache(prompt_cache_ids)
        headers = {"Authorization": f"Bearer {admin_token}"} if admin_token else {}
        self.base_url = base_url.rstrip("/")
        # httpx when it is importable, the standard-library transport otherwise.
        self._http = open_http_client(self.base_url, headers=headers, timeout=timeout)
        self.timeout = timeout

    async def __aenter__(self) -> "RollgateClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._http.close()

    # -- plumbing ---------------------------------------------------------------------------------

    async def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Any:
        resp = await self._http.request(method, path, json_body=body, query=query, timeout=timeout)
        if resp.status >= 400:
            raise _error(resp)
        if resp.status == 204 or not resp.body:
            return None
        try:
            return resp.json()
        except ValueError as e:
            raise RollgateError(resp.status, "invalid_response", f"not JSON: {resp.text[:200]}") from e

    async def health(self) -> bool:
        """``GET /health``: true when the gateway answers ok."""
        try:
            resp = await self._http.request("GET", "/health", timeout=min(self.timeout, 5.0))
        except (OSError, asyncio.TimeoutError):
            return False
        return resp.status == 200

    async def ready(self) -> bool:
        """``GET /ready``: true once the gateway serves turns (model loaded, not shutting down)."""
        try:
            resp = await self._http.request("GET", "/ready", timeout=min(self.timeout, 5.0))
        except (OSError, asyncio.TimeoutError):
            return False
        return resp.status == 200

    # -- rollouts ---------------------------------------------------------------------------------

    async def create_rollout(
        self,
        id: str | None = None,  # noqa: A002 - the API's field name
        metadata: Mapping[str, Any] | None = None,
        sampling: Mapping[str, Any] | None = None,
        backend: str | None = None,
        group: str | None = None,
        max_staleness: int | None = None,
        template: Mapping[str, Any] | None = None,
        teacher: str | Mapping[str, Any] | None | EllipsisType = ...,
    ) -> Rollout:
        """``POST /api/rollouts``. ``sampling``: defaults for every turn (``max_tokens``,
        ``temperature``, ``top_p``, ``top_k``); ``backend``: a generation backend the gateway was
        started with (default: the interception gate); ``group``: the rollouts advantages are
        relative to (e.g. the task); ``max_staleness``: turns more weight versions old than this at
        finish are not trained; ``template``: the chat template's variables for this rollout over
        the gateway's ``--template-kwargs`` (``{"enable_thinking": False}``,
        ``{"reasoning_effort": "high"}``; 400 for one the model family does not read); ``teacher``:
        who scores its turns for distillation, a teacher name the gateway knows, a vLLM-compatible
        server ``{"url": …, "model": …}``, or ``None`` for none (left out: the gateway's default).
        409 if ``id`` exists."""
        body: dict[str, Any] = {}
        if group is not None:
            body["group"] = group
        if max_staleness is not None:
            body["max_staleness"] = max_staleness
        if id is not None:
            body["id"] = id
        if metadata is not None:
            body["metadata"] = dict(metadata)
        if sampling is not None:
            body["sampling"] = dict(sampling)
        if backend is not None:
            body["backend"] = backend
        if template is not None:
            body["template"] = dict(template)
        if teacher is not ...:
            body["teacher"] = dict(teacher) if isinstance(teacher, Mapping) else teacher
        return Rollout.from_json(await self._call("POST", "/api/rollouts", body))

    async def list_rollouts(self) -> list[dict[str, Any]]:
        """``GET /api/rollouts``: one summary per rollout (id, status, metadata, turns counts…)."""
        return list((await self._call("GET", "/api/rollouts"))["rollouts"])

    async def get_rollout(self, id: str) -> dict[str, Any]:  # noqa: A002
        """``GET /api/rollouts/:id``: the summary plus ``turn_list``."""
        return await self._call("GET", f"/api/rollouts/{_seg(id)}")

    async def delete_rollout(self, id: str) -> dict[str, Any]:  # noqa: A002
        """``DELETE /api/rollouts/:id``; its pending agent requests get an error."""
        self.prompt_cache.drop_rollout(id)
        return await self._call("DELETE", f"/api/rollouts/{_seg(id)}")

    async def finish_rollout(
        self,
        id: str,  # noqa: A002
        reward: float | None = None,
        weight_version: str | int | None = None,
    ) -> list[Sample]:
        """``POST /api/rollouts/:id/finish``: no more turns; returns the samples (with ``reward``).
        ``weight_version``: the trainer's version now, what ``max_staleness`` is measured against."""
        body: dict[str, Any] = {"reward": reward} if reward is not None else {}
        if weight_version is not None:
            body["weight_version"] = weight_version
        self.prompt_cache.drop_rollout(id)
        data = await self._call(
            "POST", f"/api/rollouts/{_seg(id)}/finish", body, query={"ids": self.ids}
        )
        return [Sample.from_json(s) for s in data.get("samples", [])]

    async def reward_turn(self, id: str, turn: str | int, reward: float) -> dict[str, Any]:  # noqa: A002
        """``POST /api/rollouts/:id/turns/:turn/reward``: one recorded turn's reward (by turn id, or
        index in arrival order), before or after finish. Posting the same reward again is a no-op
        (``recorded: False``); another reward for the same turn is a 409 ``RollgateError``."""
        return await self._call(
            "POST", f"/api/rollouts/{_seg(id)}/turns/{_seg(str(turn))}/reward", {"reward": reward}
        )

    async def samples(self, id: str) -> list[Sample]:  # noqa: A002
        """``GET /api/rollouts/:id/samples`` (finished or not)."""
        data = await self._call("GET", f"/api/rollouts/{_seg(id)}/samples", query={"ids": self.ids})
        return [Sample.from_json(s) for s in data.get("samples", [])]

    async def sample_tree(self, id: str) -> dict[str, Any]:  # noqa: A002
        """``GET /api/rollouts/:id/samples?form=tree``: every turn's ids once as segments with a
        parent (train shared prefixes once); ``expand_tree`` gives the flat samples back."""
        return await self._call(
            "GET", f"/api/rollouts/{_seg(id)}/samples", query={"form": "tree", "ids": self.ids}
        )

    async def sample_calls(self, id: str) -> dict[str, Any]:  # noqa: A002
        """``GET /api/rollouts/:id/samples?form=calls``: every LLM call's prompt and output ids and
        which sample trains each output id; ``expand_calls`` gives the flat samples back."""
        return await self._call(
            "GET", f"/api/rollouts/{_seg(id)}/samples", query={"form": "calls", "ids": self.ids}
        )

    async def image(self, hash: str) -> bytes:  # noqa: A002
        """``GET /api/images/:hash``: the bytes of an image a sample shows (``Sample.images``,
        by its sha256), as the agent sent them."""
        resp = await self._http.request("GET", f"/api/images/{_seg(hash)}")
        if resp.status >= 400:
            raise _error(resp)
        return resp.body

    async def tree(self, id: str, *, compact: bool = False) -> dict[str, Any]:  # noqa: A002
        """``GET /api/rollouts/:id/tree``: every turn with its prompt ids and history. With
        ``compact=True`` it is fetched in the compact form (every id and message once, a fraction
        of the size for long rollouts) and expanded here; the result has no ``shared_prefix``."""
        if compact:
            data = await self._call("GET", f"/api/rollouts/{_seg(id)}/tree", query={"form": "compact"})
            return expand_compact_tree(data)
        return await self._call("GET", f"/api/rollouts/{_seg(id)}/tree")

    async def stream_samples(
        self,
        after: int | None = None,
        *,
        retry_delay: float = 1.0,
        idle_timeout: float = STREAM_IDLE_S,
    ) -> AsyncIterator[Sample]:
        """``GET /api/samples/stream``: every sample as its rollout finishes, each with its
        ``cursor``. With ``after``, every kept sample after that cursor comes first (``0``: all
        of them); without it, the stream starts with the next sample to finish.

        A dropped connection (say, the gateway restarting), or a stream silent for longer than
        ``idle_timeout`` (the gateway keeps an idle one alive with an empty line every 15 s), is
        reopened after ``retry_delay`` from the last cursor seen, so no sample is missed or
        repeated; keep the last cursor to resume the same way after your own restart. Runs until
        you stop iterating. 410: the samples after ``after`` are no longer kept (a gateway without
        its journal); 409: ``after`` is ahead of the gateway's newest sample (it restarted on
        another or an empty journal; the message says where it is now)."""
        cursor = after

        def start(headers: Mapping[str, str]) -> None:
            nonlocal cursor
            if cursor is None and headers.get("x-rollgate-cursor", "").isdigit():
                cursor = int(headers["x-rollgate-cursor"])

        while True:
            lines = self._http.stream_lines(
                "/api/samples/stream", query={"after": cursor}, on_headers=start
            ).__aiter__()
            try:
                while True:
                    try:
                        line = await asyncio.wait_for(lines.__anext__(), idle_timeout)
                    except StopAsyncIteration:
                        break
                    if not line.strip():
                        continue
                    sample = Sample.from_json(json.loads(line))
                    cursor = sample.cursor
                    yield sample
            except StreamError as e:
                raise _error(e.response) from None
            except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError) as e:
                log.warning("the sample stream broke (%r); reopening after cursor %s", e, cursor)
            finally:
                await lines.aclose()
            await asyncio.sleep(retry_delay)

    # -- the gate ---------------------------------------------------------------------------------

    async def next_request(
        self,
        wait: float,
        rollout: str | None = None,
        lease: float | None = None,
        *,
        ack: bool = False,
        weight_version: str | int | None = None,
    ) -> PendingRequest | None:
        """``GET /api/requests/next``: the oldest unclaimed request (of ``rollout`` if given),
        waiting up to ``wait`` seconds (≤ 300); ``None`` when nothing arrived in time.

        The request is yours only until the gateway's ack timeout (default 10 s): ``ack`` it at
        once, then ``renew`` before its lease runs out (``serve_requests`` does both). Otherwise it
        is offered again — which is what saves it when this poll's answer is lost on the way.
        ``lease`` (seconds, ≤ the gateway's bound) is what the ``ack`` grants.

        ``ack=True`` (``?ack=1``) saves that call: the request comes already acknowledged, leased
        for ``lease`` (default: the gateway's) under ``weight_version`` (default: the one in force),
        as ``ack`` would lease it; ``request.lease_s`` and ``request.expires_at`` say so. The price:
        if this answer is lost, the request is offered again only once that lease lapses — ask for
        a short one and ``renew`` (``serve_requests`` takes ``FIRST_LEASE_S``). A gateway without
        the form answers without ``lease_s``: ``ack`` the request then."""
        data = await self._next(wait, rollout, lease, None, ack, weight_version)
        return (await self._pending(data)) if data else None

    async def next_requests(
        self,
        wait: float,
        max: int,  # noqa: A002
        rollout: str | None = None,
        lease: float | None = None,
        *,
        ack: bool = False,
        weight_version: str | int | None = None,
    ) -> list[PendingRequest]:
        """``GET /api/requests/next?max=N``: up to ``max`` (≤ 256) unclaimed requests in one
        answer, waiting up to ``wait`` seconds for the first; ``[]`` when none arrived in time.
        Each is yours as one from ``next_request`` is (``ack_many`` acknowledges them at once;
        with ``ack=True`` each comes leased already)."""
        data = await self._next(wait, rollout, lease, max, ack, weight_version)
        return [await self._pending(r) for r in (data or {}).get("requests", [])]

    async def _next(
        self,
        wait: float,
        rollout: str | None,
        lease: float | None,
        max: int | None,  # noqa: A002
        ack: bool,
        weight_version: str | int | None,
    ) -> Any:
        wait = max_wait(wait)
        query: dict[str, Any] = {"wait": f"{wait:g}", "rollout": rollout, "ids": self.ids}
        if self.prompts == "delta":
            query.update(prompt="delta", trainer=self.trainer_id)
        if lease is not None:
            query["lease"] = f"{float(lease):g}"
        if max is not None:
            query["max"] = str(int(max))
        if ack:
            query["ack"] = "1"
            if weight_version is not None:
                query["weight_version"] = str(weight_version)
        elif weight_version is not None:
            raise ValueError("weight_version on next_request needs ack=True: it is what the ack names")
        return await self._call("GET", "/api/requests/next", query=query, timeout=self.timeout + wait)

    async def _pending(self, data: Mapping[str, Any]) -> PendingRequest:
        """A handed-out request with its whole prompt: rebuilt on a kept base, or fetched."""
        if self.prompts != "delta":
            return PendingRequest.from_json(data)
        base = data.get("prompt_base")
        base_id = str(base["request_id"]) if isinstance(base, Mapping) else None
        prompt = _id_array(data.get("prompt_ids"))
        if base_id is not None:
            rebuilt = self.prompt_cache.rebuild(base_id, int(base["length"]), prompt)
            prompt = rebuilt if rebuilt is not None else await self.prompt(str(data["request_id"]))
        self.prompt_cache.opened(str(data["request_id"]), str(data["rollout_id"]), prompt, base_id)
        fields = {k: v for k, v in data.items() if k not in ("prompt_base", "prompt_length")}
        fields["prompt_ids"] = prompt.tolist()
        fields.pop("ids_encoding", None)
        return PendingRequest.from_json(fields)

    async def prompt(self, request_id: str) -> array:
        """``GET /api/requests/:id/prompt``: a handed-out request's whole prompt (what a delta
        is rebuilt into when its base is not kept)."""
        data = await self._call(
            "GET", f"/api/requests/{_seg(request_id)}/prompt", query={"ids": self.ids}
        )
        return _id_array(data.get("prompt_ids"))

    async def ack(
        self, request_id: str, lease: float | None = None, weight_version: str | int | None = None
    ) -> dict[str, Any]:
        """``POST /api/requests/:id/ack``: the request is yours for ``lease`` seconds (default:
        what ``next_request`` asked for, else the gateway's). Returns ``{request_id, lease_s,
        expires_at}``. 410 when the request was withdrawn (its agent is gone): drop the work.
        ``weight_version``: the version you generate it under, the turn's version (its first
        id's) unless an appended chunk names one; the completion's stays its version at completion."""
        body: dict[str, Any] = {"lease": float(lease)} if lease is not None else {}
        if weight_version is not None:
            body["weight_version"] = weight_version
        return await self._call("POST", f"/api/requests/{_seg(request_id)}/ack", body)

    async def renew(self, request_id: str, lease: float | None = None) -> dict[str, Any]:
        """``POST /api/requests/:id/renew``: extends the lease while the engine works (the same
        call as ``ack``). 410 when the request was withdrawn meanwhile."""
        body = {"lease": float(lease)} if lease is not None else {}
        return await self._call("POST", f"/api/requests/{_seg(request_id)}/renew", body)

    async def append(
        self, request_id: str, output_ids: list[int], weight_version: str | int | None = None
    ) -> dict[str, Any]:
        """``POST /api/requests/:id/append``: ids sampled so far, streamed to the agent before the
        completion (which must then start with every appended id). ``weight_version``: the
        version that sampled this chunk (kept per chunk when a weight update falls inside a turn)."""
        body: dict[str, Any] = {"output_ids": list(output_ids)}
        if weight_version is not None:
            body["weight_version"] = weight_version
        return await self._call("POST", f"/api/requests/{_seg(request_id)}/append", body=body)

    async def append_many(
        self, appends: Iterable[tuple[str, list[int]] | tuple[str, list[int], str | int | None]]
    ) -> list[dict[str, Any] | RollgateError]:
        """``POST /api/requests/append``: ``(request_id, output_ids[, weight_version])`` for
        several requests in one call; per item its answer, or the ``RollgateError`` it got."""
        items = []
        for a in appends:
            item: dict[str, Any] = {"request_id": a[0], "output_ids": list(a[1])}
            if len(a) > 2 and a[2] is not None:
                item["weight_version"] = a[2]
            items.append(item)
        data = await self._call("POST", "/api/requests/append", {"appends": items})
        return [_item_result(r) for r in data["results"]]

    async def ack_many(
        self, request_ids: Iterable[str], lease: float | None = None
    ) -> list[dict[str, Any] | RollgateError]:
        """``POST /api/requests/ack``: acknowledges several requests at once (``lease`` for
        all); per request ``{request_id, lease_s, expires_at}``, or the ``RollgateError`` it got."""
        body: dict[str, Any] = {"request_ids": list(request_ids)}
        if lease is not None:
            body["lease"] = float(lease)
        data = await self._call("POST", "/api/requests/ack", body)
        return [_item_result(r) for r in data["results"]]

    async def complete(
        self,
        request_id: str,
        output_ids: list[int],
        logprobs: list[float] | None = None,
        finish_reason: str = "stop",
        weight_version: str | int | None = None,
        logprobs_mode: str | None = None,
        routed_experts: Mapping[str, Any] | None = None,
        sampling_mask: list[list[int]] | None = None,
    ) -> dict[str, Any]:
        """``POST /api/requests/:id/complete``. 404 unknown id, 409 already resolved, 410
        withdrawn (the agent is gone), 400 ids outside the vocabulary, more than ``max_tokens``
        ids, ``logprobs`` not one per output id, ``routed_experts`` not one row per position
        ``routed_experts_from … len(prompt_ids) + len(output_ids) - 2``, or ``sampling_mask`` (each
        output id's kept set, vLLM's format) not one set per output id holding the id sampled there.

        A completion whose answer is lost (the connection broke, a replica died, a balancer said
        502/503/504) is sent again, up to ``COMPLETE_ATTEMPTS`` times: the gateway accepts it
        once, and a send after the one that landed is answered ``{"resent": true}``."""
        body = _completion_body(
            Completion(
                output_ids=list(output_ids),
                logprobs=logprobs,
                finish_reason=finish_reason,
                weight_version=weight_version,
                logprobs_mode=logprobs_mode,
                routed_experts=routed_experts,
                sampling_mask=sampling_mask,
            )
        )
        path = f"/api/requests/{_seg(request_id)}/complete"
        for attempt in range(COMPLETE_ATTEMPTS):
            last = attempt == COMPLETE_ATTEMPTS - 1
            try:
                answer = await self._call("POST", path, body)
                self.prompt_cache.completed(request_id, body["output_ids"])
                return answer
            except RollgateError as e:
                if e.status not in RETRY_STATUSES or last:
                    # Not known to be recorded (or not ours): the next delta must not extend it.
                    self.prompt_cache.closed(request_id)
                    raise
                log.warning("the completion of %s was not taken (%s); sending it again", request_id, e)
            except (OSError, asyncio.TimeoutError) as e:
                if last:
                    self.prompt_cache.closed(request_id)
                    raise
                log.warning("the completion of %s got no answer (%r); sending it again", request_id, e)
            await asyncio.sleep(min(0.25 * 2**attempt, 4.0))
        raise AssertionError("unreachable")

    async def complete_many(
        self, completions: Iterable[tuple[str, Completion | Mapping[str, Any]]]
    ) -> list[dict[str, Any] | RollgateError]:
        """``POST /api/requests/complete``: several ``(request_id, Completion)`` in one call, each
        checked and recorded on its own; per item ``{request_id, completed}`` or the
        ``RollgateError`` it got (as ``complete`` would raise it)."""
        items = [(rid, _completion_body(_as_completion(c))) for rid, c in completions]
        try:
            data = await self._call(
                "POST",
                "/api/requests/complete",
                {"completions": [{"request_id": rid, **body} for rid, body in items]},
            )
        except (RollgateError, OSError, asyncio.TimeoutError):
            for rid, _ in items:
                self.prompt_cache.closed(rid)
            raise
        results = [_item_result(r) for r in data["results"]]
        for (rid, body), result in zip(items, results):
            if isinstance(result, RollgateError):
                self.prompt_cache.closed(rid)
            else:
                self.prompt_cache.completed(rid, body["output_ids"])
        return results

    async def fail(self, request_id: str, error: str, status: int | None = None) -> dict[str, Any]:
        """``POST /api/requests/:id/fail``: the agent gets a protocol-shaped error (default 502)."""
        body: dict[str, Any] = {"error": error}
        if status is not None:
            body["status"] = status
        self.prompt_cache.closed(request_id)
        return await self._call("POST", f"/api/requests/{_seg(request_id)}/fail", body)

    # -- admission control (weight sync) ----------------------------------------------------------

    async def pause(self) -> GatewayStatus:
        """``POST /api/pause``: new turns are held (their agents wait, nothing is refused) until
        ``resume``; generations already handed out finish normally and count as ``in_flight``.
        Use around a weight update: ``pause()``, ``drain()``, swap weights, ``resume()``."""
        return GatewayStatus.from_json(await self._call("POST", "/api/pause") or {})

    async def resume(self, weight_version: str | int | None = None) -> GatewayStatus:
        """``POST /api/resume``: release the held turns, in arrival order. ``weight_version``: the
        version now in force; turns sent from now on (and requests acknowledged without a version)
        are stamped with it as their first id's version (one gateway; replicas refuse it)."""
        body = {"weight_version": weight_version} if weight_version is not None else None
        return GatewayStatus.from_json(await self._call("POST", "/api/resume", body) or {})

    async def status(self) -> GatewayStatus:
        """``GET /api/status``: ``{paused, in_flight, held, pending_requests}``."""
        return GatewayStatus.from_json(await self._call("GET", "/api/status") or {})

    async def drain(self, timeout: float | None = None, poll: float = 0.1) -> GatewayStatus:
        """Polls ``status`` until nothing is in flight (after ``pause``). In gate mode the requests
        in flight are the trainer's own: keep serving them meanwhile, or this never returns.
        Raises ``asyncio.TimeoutError`` after ``timeout`` seconds."""

        async def loop() -> GatewayStatus:
            while True:
                st = await self.status()
                if st.in_flight == 0:
                    return st
                await asyncio.sleep(poll)

        return await asyncio.wait_for(loop(), timeout)

    # -- worker loop ------------------------------------------------------------------------------

    async def serve_requests(
        self,
        handler: Handler,
        *,
        concurrency: int = 4,
        rollout: str | None = None,
        stop_event: asyncio.Event | None = None,
        poll_wait: float = 2.0,
        retry_delay: float = 1.0,
        lease: float = DEFAULT_LEASE_S,
    ) -> ServeStats:
        """Resolve pending requests with ``handler`` until ``stop_event`` is set.

        ``concurrency`` workers each long-poll ``next_request`` (``poll_wait`` seconds at a time)
        for a request handed out already acknowledged (``ack=True``, leased for ``FIRST_LEASE_S``
        or ``lease`` if shorter; a gateway without that form gets an ``ack``), await
        ``handler(request)`` while renewing its ``lease`` (first at a third of the first lease,
        then every third of ``lease``), and post its ``Completion`` (or a mapping with the same
        keys): a turn is two calls, ``next`` and ``complete``. When the gateway withdraws the
        request meanwhile (its agent is gone, its turn timed out), the handler is cancelled and
        nothing is posted (``stats.withdrawn``).
        When the handler raises, the request is failed with the exception's message (and its
        ``status`` attribute when it has one in 400–599), so the agent sees an error instead of
        hanging; a completion the gateway refuses with 400 is failed the same way.

        Stopping: once ``stop_event`` is set, each worker finishes its current long poll (at most
        ``poll_wait`` s) and the request that poll returned, then exits — a claimed request is
        never abandoned. Cancelling the task instead stops at once (in-flight handlers' requests
        are failed, best effort). Polling errors (gateway restarting) are logged and retried after
        ``retry_delay``; 401/403 (wrong admin token) is raised. With ``rollout`` set, the workers
        end when that rollout no longer exists.
        """
        if concurrency < 1:
            raise ValueError("concurrency must be ≥ 1")
        stop = stop_event or asyncio.Event()
        stats = ServeStats()
        tasks = [
            asyncio.ensure_future(
                self._worker(handler, rollout, stop, poll_wait, retry_delay, lease, stats)
            )
            for _ in range(concurrency)
        ]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for t in done:
                if not t.cancelled() and t.exception() is not None:
                    raise t.exception()  # type: ignore[misc]
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        return stats

    async def _worker(
        self,
        handler: Handler,
        rollout: str | None,
        stop: asyncio.Event,
        poll_wait: float,
        retry_delay: float,
        lease: float,
        stats: ServeStats,
    ) -> None:
        while not stop.is_set():
            try:
                pending = await self.next_request(
                    poll_wait, rollout, min(lease, FIRST_LEASE_S), ack=True
                )
            except RollgateError as e:
                if e.status in (401, 403):
                    raise
                if e.status == 404 and rollout is not None:
                    log.info("rollout %s is gone; worker stops", rollout)
                    return
                stats.errors += 1
                log.warning("polling for requests failed: %s", e)
                await _sleep_or_stop(stop, retry_delay)
                continue
            except (OSError, asyncio.TimeoutError) as e:
                stats.errors += 1
                log.warning("polling for requests failed: %r", e)
                await _sleep_or_stop(stop, retry_delay)
                continue
            if pending is not None:
                await self._resolve(handler, pending, lease, stats)

    async def _resolve(
        self, handler: Handler, pending: PendingRequest, lease: float, stats: ServeStats
    ) -> None:
        rid = pending.request_id
        # Handed out leased (`next?ack=1`): no ack; an older gateway's answer has no lease.
        first_lease = pending.lease_s
        if first_lease is None and not await self._acked(rid, lease, stats):
            self.prompt_cache.closed(rid)
            return
        withdrawn = asyncio.Event()
        work = asyncio.ensure_future(handler(pending))
        keeper = asyncio.ensure_future(
            self._keep_leased(rid, lease, work, withdrawn, first_lease or lease)
        )
        try:
            result = await work
            completion = _as_completion(result)
        except asyncio.CancelledError:
            if withdrawn.is_set():
                stats.withdrawn += 1
                log.info("request %s was withdrawn while its handler ran (agent gone?)", rid)
                self.prompt_cache.closed(rid)
                return
            await self._fail_quietly(rid, "the trainer worker was stopped", None, stats, count=False)
            raise
        except Exception as e:  # noqa: BLE001 - every handler error goes back to the agent
            log.warning("handler failed for %s (rollout %s): %r", rid, pending.rollout_id, e)
            status = getattr(e, "status", None)
            status = status if isinstance(status, int) and 400 <= status <= 599 else None
            await self._fail_quietly(rid, str(e) or type(e).__name__, status, stats)
            return
        finally:
            keeper.cancel()
        try:
            await self.complete(
                rid,
                completion.output_ids,
                logprobs=completion.logprobs,
                finish_reason=completion.finish_reason,
                weight_version=completion.weight_version,
                logprobs_mode=completion.logprobs_mode,
                routed_experts=completion.routed_experts,
                sampling_mask=completion.sampling_mask,
            )
            stats.completed += 1
        except RollgateError as e:
            if e.status == 410:
                stats.withdrawn += 1
                log.info("request %s was withdrawn before its completion landed: %s", rid, e)
            elif e.status in (404, 409):
                stats.dropped += 1
                log.info("request %s was resolved elsewhere (rollout finished/deleted?): %s", rid, e)
            else:
                log.warning("completion for %s refused: %s", rid, e)
                await self._fail_quietly(rid, f"invalid completion: {e.message}", None, stats)
        except (OSError, asyncio.TimeoutError) as e:
            stats.errors += 1
            log.warning("could not post the completion for %s: %r", rid, e)

    async def _acked(self, rid: str, lease: float, stats: ServeStats) -> bool:
        """Acknowledges ``rid``; False when the gateway refuses (withdrawn, resolved: drop it).

        An ack whose answer was lost may have landed: the request is then leased to this worker,
        and dropping it would leave its agent waiting out the lease. So a lost answer is asked
        again (an ack of a request this worker holds renews it), and if it never comes the
        request is handled anyway: a completion is accepted while nobody else sent one, and a
        duplicate is refused (409), never recorded twice."""
        for attempt in range(ACK_ATTEMPTS):
            try:
                await self.ack(rid, lease)
                return True
            except RollgateError as e:
                # Withdrawn or resolved already; anything else: the gateway offers it again later.
                if e.status == 410:
                    stats.withdrawn += 1
                elif e.status in (404, 409):
                    stats.dropped += 1
                else:
                    stats.errors += 1
                log.info("could not acknowledge %s: %s", rid, e)
                return False
            except (OSError, asyncio.TimeoutError) as e:
                stats.errors += 1
                log.warning("the acknowledgement of %s got no answer (attempt %d): %r", rid, attempt + 1, e)
                await asyncio.sleep(min(0.5 * (attempt + 1), 2.0))
        return True

    async def _keep_leased(
        self,
        rid: str,
        lease: float,
        work: asyncio.Future[Any],
        withdrawn: asyncio.Event,
        held: float,
    ) -> None:
        """Renews ``rid``'s lease (``held`` seconds, granted now) to ``lease`` at a third of what
        it holds, until cancelled; cancels ``work`` when the gateway says it was withdrawn."""
        while True:
            await asyncio.sleep(held / 3)
            held = lease
            try:
                await self.renew(rid, lease)
            except RollgateError as e:
                if e.status == 410:
                    withdrawn.set()
                    work.cancel()
                    return
                if e.status in (404, 409):
                    return  # resolved elsewhere; the completion will say so
                log.warning("could not renew the lease of %s: %s", rid, e)
            except (OSError, asyncio.TimeoutError) as e:
                # The lease may lapse; a completion is still accepted while nobody else sent one.
                log.warning("could not renew the lease of %s: %r", rid, e)

    async def _fail_quietly(
        self, rid: str, message: str, status: int | None, stats: ServeStats, *, count: bool = True
    ) -> None:
        try:
            await asyncio.wait_for(self.fail(rid, message, status), min(self.timeout, 10.0))
            if count:
                stats.failed += 1
        except RollgateError as e:
            if e.status in (404, 409, 410):
                stats.dropped += 1
            else:
                stats.errors += 1
                log.warning("could not fail %s: %s", rid, e)
        except (OSError, asyncio.TimeoutError) as e:
            stats.errors += 1
            log.warning("could not fail %s: %r", rid, e)


def max_wait(wait: float) -> float:
    """``wait`` within what the gateway accepts for a long poll."""
    return max(0.0, min(float(wait), MAX_WAIT_S))


def _id_array(value: Any) -> array:
    """Token ids as the body carries them (a JSON list, or base64 of little-endian int32)."""
    if isinstance(value, str):
        ids = array("i", base64.b64decode(value))
        if sys.byteorder == "big":
            ids.byteswap()
        return ids
    return array("i", value or [])


def _completion_body(c: Completion) -> dict[str, Any]:
    body: dict[str, Any] = {"output_ids": list(c.output_ids), "finish_reason": c.finish_reason}
    if c.sampling_mask is not None:
        body["sampling_mask"] = [list(s) for s in c.sampling_mask]
    if c.logprobs_mode is not None:
        body["logprobs_mode"] = c.logprobs_mode
    if c.routed_experts is not None:
        body["routed_experts"] = dict(c.routed_experts)
    if c.logprobs is not None:
        body["logprobs"] = list(c.logprobs)
    if c.weight_version is not None:
        body["weight_version"] = c.weight_version
    return body


def _item_result(item: Mapping[str, Any]) -> dict[str, Any] | RollgateError:
    """One item of a batch answer: its result, or its error as the single call raises it."""
    err = item.get("error")
    if isinstance(err, Mapping) and "status" in item:
        return RollgateError(int(item["status"]), str(err.get("type") or "error"), str(err.get("message") or ""))
    return dict(item)


def _as_completion(result: Any) -> Completion:
    if isinstance(result, Completion):
        return result
    if isinstance(result, Mapping):
        return Completion(
            output_ids=list(result["output_ids"]),
            logprobs=result.get("logprobs"),
            finish_reason=result.get("finish_reason", "stop"),
            weight_version=result.get("weight_version"),
            logprobs_mode=result.get("logprobs_mode"),
            routed_experts=result.get("routed_experts"),
            sampling_mask=result.get("sampling_mask"),
        )
    raise TypeError(f"the handler must return a Completion, got {type(result).__name__}")


async def _sleep_or_stop(stop: asyncio.Event, seconds: float) -> None:
    try:
        await asyncio.wait_for(stop.wait(), seconds)
    except asyncio.TimeoutError:
        pass
