#!/usr/bin/env python3
"""Gate worker: resolves rollgate's pending requests with a vLLM server (standard library only).

Every agent turn waits in the gateway as a pending request holding the exact ``prompt_ids``.
This worker long-polls them, sends the ids to vLLM's OpenAI-compatible ``/v1/completions``
(``prompt`` = token ids, so nothing is re-tokenized), and posts back the sampled ``token_ids``
with their logprobs. The gateway parses them into the agent's answer and records the turn.

    python3 vllm_gate_worker.py --gateway http://127.0.0.1:7860 \\
        --vllm http://127.0.0.1:8000 --model Qwen/Qwen3-8B --concurrency 16

vLLM request per turn (documented fields of its completions API):

    {"model": ..., "prompt": [ids...], "max_tokens": ..., "temperature": ..., "top_p": ...,
     "stop_token_ids": [...], "logprobs": 1, "return_token_ids": true,
     "return_tokens_as_token_ids": true}

and the answer used: ``choices[0].token_ids`` (the sampled ids; vLLM ≥ 0.10.2 with
``return_token_ids``), ``choices[0].logprobs.token_logprobs`` (one per sampled id) and
``choices[0].finish_reason``. On an older vLLM without ``token_ids`` the ids are read from
``logprobs.tokens`` (``"token_id:<n>"`` thanks to ``return_tokens_as_token_ids``).

Sampling: the pending request's ``temperature``/``top_p`` when the agent or rollout set them,
else ``--temperature``/``--top-p`` (default 1.0: sample from the policy itself, as RL wants).
``--weight-version`` is recorded with every turn (per-turn staleness for off-policy correction).
At start the worker asks vLLM for its models (``GET /v1/models``) and exits with status 1 when
no vLLM answers or it does not serve ``--model``. Stop with Ctrl-C / SIGTERM: workers finish the
request in hand, then exit.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from dataclasses import dataclass
from typing import Any

try:
    from rollgate_client import AsyncHTTPClient, Completion, PendingRequest, RollgateClient, ServeStats
except ImportError:  # running from a checkout without installing: clients/python is one level up
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from rollgate_client import AsyncHTTPClient, Completion, PendingRequest, RollgateClient, ServeStats

log = logging.getLogger("vllm_gate_worker")


class EngineError(Exception):
    """vLLM refused or failed a generation; ``status`` is what the agent will see."""

    def __init__(self, message: str, status: int = 502) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class VLLMBackend:
    """``generate(pending) -> Completion`` against a vLLM ``/v1/completions`` endpoint."""

    url: str
    model: str
    api_key: str | None = None
    temperature: float = 1.0
    top_p: float = 1.0
    weight_version: str | None = None
    timeout: float = 600.0

    def __post_init__(self) -> None:
        base = self.url.rstrip("/")
        if base.endswith("/v1"):
            base = base[: -len("/v1")]
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        self._http = AsyncHTTPClient(base, headers=headers, timeout=self.timeout)

    async def close(self) -> None:
        await self._http.close()

    def request_body(self, pending: PendingRequest) -> dict[str, Any]:
        s = pending.sampling
        body: dict[str, Any] = {
            "model": self.model,
            "prompt": pending.prompt_ids,
            "max_tokens": s.get("max_tokens"),
            "temperature": _first(s.get("temperature"), self.temperature),
            "top_p": _first(s.get("top_p"), self.top_p),
            "stop_token_ids": list(s.get("stop_token_ids") or []),
            "logprobs": 1,
            "return_token_ids": True,
            "return_tokens_as_token_ids": True,
            "n": 1,
            "stream": False,
            # Sticky routing key for a router in front of several engines (prefix cache per rollout).
            "user": pending.rollout_id,
        }
        return {k: v for k, v in body.items() if v is not None}

    async def probe(self) -> list[str]:
        """The models vLLM serves (``GET /v1/models``); raises ``EngineError`` saying what is wrong
        when no vLLM answers there or it does not serve ``model``."""
        try:
            resp = await self._http.request("GET", "/v1/models", timeout=10)
        except (OSError, asyncio.TimeoutError) as e:
            raise EngineError(f"no vLLM answers at {self.url} ({e!r}): start it first, or pass --vllm URL") from None
        if resp.status >= 400:
            raise EngineError(f"{self.url}/v1/models answered {resp.status}: {resp.text[:200]} (is this a vLLM server?)")
        served = [m.get("id") for m in (resp.json() or {}).get("data", []) if isinstance(m, dict)]
        if self.model not in served:
            raise EngineError(f"vLLM at {self.url} serves {served}, not --model {self.model}")
        return served

    async def generate(self, pending: PendingRequest) -> Completion:
        resp = await self._http.request("POST", "/v1/completions", json_body=self.request_body(pending))
        if resp.status >= 400:
            try:
                err = resp.json() or {}
                msg = err.get("error", {}).get("message") if isinstance(err.get("error"), dict) else err.get("message")
            except ValueError:
                msg = None
            raise EngineError(f"vLLM answered {resp.status}: {msg or resp.text[:300]}", 503 if resp.status >= 500 else 502)
        return parse_completion(resp.json(), self.weight_version)


def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def parse_completion(data: dict[str, Any], weight_version: str | None = None) -> Completion:
    """vLLM's ``/v1/completions`` answer → ``Completion`` (ids, aligned logprobs, finish)."""
    try:
        choice = data["choices"][0]
    except (KeyError, IndexError, TypeError):
        raise EngineError(f"vLLM answer without choices: {str(data)[:300]}") from None
    lp = choice.get("logprobs") or {}
    ids = choice.get("token_ids")
    if ids is None:
        tokens = lp.get("tokens") or []
        if not tokens or not all(isinstance(t, str) and t.startswith("token_id:") for t in tokens):
            raise EngineError("vLLM returned no token ids: it needs return_token_ids (vLLM ≥ 0.10.2) "
                              "or return_tokens_as_token_ids with logprobs")
        ids = [int(t[len("token_id:"):]) for t in tokens]
    logprobs = lp.get("token_logprobs")
    if logprobs is not None and (len(logprobs) != len(ids) or any(x is None for x in logprobs)):
        log.warning("vLLM logprobs not aligned with the %d sampled ids; sending none", len(ids))
        logprobs = None
    finish = "length" if choice.get("finish_reason") == "length" else "stop"
    return Completion(output_ids=list(ids), logprobs=logprobs, finish_reason=finish, weight_version=weight_version)


async def run_worker(
    gateway: str,
    backend: VLLMBackend,
    *,
    concurrency: int = 8,
    admin_token: str | None = None,
    rollout: str | None = None,
    stop_event: asyncio.Event | None = None,
    poll_wait: float = 2.0,
) -> ServeStats:
    """Serves the gateway's pending requests with ``backend`` until ``stop_event`` is set."""
    async with RollgateClient(gateway, admin_token=admin_token) as client:
        try:
            return await client.serve_requests(
                backend.generate,
                concurrency=concurrency,
                rollout=rollout,
                stop_event=stop_event,
                poll_wait=poll_wait,
            )
        finally:
            await backend.close()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Resolve rollgate's pending requests with a vLLM /v1/completions server.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("--gateway", default=os.environ.get("ROLLGATE_URL", "http://127.0.0.1:7860"), help="rollgate URL")
    p.add_argument("--vllm", default="http://127.0.0.1:8000", help="vLLM server URL (with or without /v1)")
    p.add_argument("--model", required=True, help="model name served by vLLM")
    p.add_argument("--concurrency", type=int, default=8, help="requests generated at once")
    p.add_argument("--admin-token", default=os.environ.get("ROLLGATE_ADMIN_TOKEN"), help="gateway admin token (env ROLLGATE_ADMIN_TOKEN)")
    p.add_argument("--vllm-api-key", default=os.environ.get("VLLM_API_KEY"), help="vLLM --api-key (env VLLM_API_KEY)")
    p.add_argument("--rollout", help="serve only this rollout's requests")
    p.add_argument("--temperature", type=float, default=1.0, help="when the request sets none")
    p.add_argument("--top-p", type=float, default=1.0, help="when the request sets none")
    p.add_argument("--weight-version", help="recorded with every completion")
    p.add_argument("--poll-wait", type=float, default=2.0, help="long-poll length, seconds")
    p.add_argument("-v", "--verbose", action="store_true")
    return p.parse_args(argv)


async def amain(args: argparse.Namespace) -> ServeStats:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):  # not on this platform / not the main thread
            pass
    backend = VLLMBackend(
        args.vllm, args.model, api_key=args.vllm_api_key, temperature=args.temperature,
        top_p=args.top_p, weight_version=args.weight_version,
    )
    try:
        await backend.probe()
    except EngineError as e:
        await backend.close()
        log.error("%s", e)
        raise SystemExit(1) from None
    log.info("vLLM at %s serves %s; serving %s (concurrency %d)", args.vllm, args.model, args.gateway, args.concurrency)
    stats = await run_worker(
        args.gateway, backend, concurrency=args.concurrency, admin_token=args.admin_token,
        rollout=args.rollout, stop_event=stop, poll_wait=args.poll_wait,
    )
    log.info("stopped: %s", stats)
    return stats


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # Quiet by default: this worker's own lines and every warning; -v adds everything (httpx's
    # line per request included).
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    log.setLevel(logging.DEBUG if args.verbose else logging.INFO)
    asyncio.run(amain(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
