"""The same JSON-over-HTTP client as ``transport.AsyncHTTPClient``, on ``httpx`` (used when it is
importable; the standard-library transport is the fallback). Its errors are mapped to the ones the
fallback raises, so callers handle one set: an unreachable server or a broken connection is a
``ConnectionError`` (an ``OSError``), a call that takes too long an ``asyncio.TimeoutError``.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from typing import Any, AsyncIterator, Callable, Iterator, Mapping

import httpx

from .transport import USER_AGENT, HTTPResponse, StreamError, encode_body, split_base_url

__all__ = ["HttpxHTTPClient"]


@contextlib.contextmanager
def _mapped_errors() -> Iterator[None]:
    try:
        yield
    except httpx.TimeoutException as e:
        raise asyncio.TimeoutError(str(e)) from e
    except httpx.TransportError as e:
        raise ConnectionError(f"{type(e).__name__}: {e}") from e


class HttpxHTTPClient:
    """JSON over HTTP to one origin (``http://`` or ``https://``, optional path prefix), on httpx."""

    def __init__(
        self,
        base_url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 60.0,
        max_idle: int = 16,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        split_base_url(base_url)
        self.base_url = base_url.rstrip("/")
        self.headers = dict(headers or {})
        self.timeout = timeout
        # Each call is bounded as a whole below (a long poll waits on purpose): no httpx timeout.
        self._client = httpx.AsyncClient(
            base_url=self.base_url + "/",
            headers={"User-Agent": USER_AGENT},
            timeout=None,
            limits=httpx.Limits(max_keepalive_connections=max_idle),
            verify=ssl_context if ssl_context is not None else True,
        )

    async def __aenter__(self) -> "HttpxHTTPClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._client.aclose()

    async def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        query: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> HTTPResponse:
        """One request; ``timeout`` (default: the client's) bounds the whole exchange."""
        if self._client.is_closed:
            raise RuntimeError("the HTTP client is closed")
        hdrs = {"Accept": "application/json", **self.headers, **(headers or {})}
        body = encode_body(method, json_body, hdrs)
        with _mapped_errors():
            resp = await asyncio.wait_for(
                self._client.request(
                    method.upper(),
                    path.lstrip("/"),
                    content=body,
                    headers=hdrs,
                    params=_params(query),
                ),
                timeout if timeout is not None else self.timeout,
            )
        return HTTPResponse(resp.status_code, _headers(resp), resp.content)

    async def stream_lines(
        self,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        on_headers: Callable[[Mapping[str, str]], None] | None = None,
    ) -> AsyncIterator[bytes]:
        """``GET`` a streamed response and yield it line by line (without the newline) as it
        arrives; ``on_headers`` sees the response headers first. An error status raises
        ``StreamError`` with the response."""
        request = self._client.build_request(
            "GET",
            path.lstrip("/"),
            params=_params(query),
            headers={"Accept": "application/x-ndjson", **self.headers},
        )
        with _mapped_errors():
            resp = await asyncio.wait_for(self._client.send(request, stream=True), self.timeout)
        try:
            with _mapped_errors():
                if resp.status_code >= 400:
                    body = await asyncio.wait_for(resp.aread(), self.timeout)
                    raise StreamError(HTTPResponse(resp.status_code, _headers(resp), body))
                if on_headers is not None:
                    on_headers(_headers(resp))
                pending = b""
                async for chunk in resp.aiter_raw():
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        yield line
        finally:
            await resp.aclose()


def _params(query: Mapping[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (query or {}).items() if v is not None}


def _headers(resp: httpx.Response) -> dict[str, str]:
    return {k.lower(): v for k, v in resp.headers.items()}
