"""A small asyncio HTTP/1.1 client (standard library only) for JSON APIs.

Why not ``http.client`` in a thread: a long poll parked in a thread cannot be cancelled, and a
trainer runs many of them. Here a cancelled or timed-out call closes its socket at once, so the
server sees the disconnect (the gateway then drops the waiting long poll instead of handing it a
request nobody will read).

Connections are kept alive and reused. A reused connection that the server closed while it sat
idle is detected before use (EOF already seen) or, failing that, when it yields no response byte
at all; the call is then retried once on a fresh connection.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Mapping
from urllib.parse import urlencode, urlsplit

__all__ = ["AsyncHTTPClient", "HTTPResponse", "StreamError", "open_http_client"]

USER_AGENT = "rollgate-client-python/0.1"
_LINE_LIMIT = 1 << 20


@dataclass
class HTTPResponse:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


def encode_body(method: str, json_body: Any, headers: dict[str, str]) -> bytes:
    """The request body: ``json_body`` as compact JSON, ``{}`` for a bodiless POST/PUT/PATCH (the
    trainer API takes JSON bodies only); sets ``Content-Type`` when there is one."""
    if json_body is not None:
        headers.setdefault("Content-Type", "application/json")
        return json.dumps(json_body, separators=(",", ":")).encode()
    if method.upper() in ("POST", "PUT", "PATCH"):
        headers.setdefault("Content-Type", "application/json")
        return b"{}"
    return b""


class StreamError(Exception):
    """A streamed request answered with an error status (the response is attached)."""

    def __init__(self, response: HTTPResponse) -> None:
        super().__init__(f"HTTP {response.status}")
        self.response = response


class _StaleConnection(Exception):
    """A reused keep-alive connection was closed by the server before it answered."""


class _Conn:
    __slots__ = ("reader", "writer", "reused")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.reused = False

    def usable(self) -> bool:
        return not (self.writer.is_closing() or self.reader.at_eof())

    def close(self) -> None:
        try:
            self.writer.close()
        except Exception:  # noqa: BLE001 - closing is best effort
            pass


def split_base_url(base_url: str):
    """``base_url`` split, once checked to be ``http(s)://host[:port][/prefix]``."""
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"base_url must be http(s)://host[:port][/prefix], got {base_url!r}")
    return parts


class AsyncHTTPClient:
    """JSON over HTTP/1.1 to one origin (``http://`` or ``https://``, optional path prefix)."""

    def __init__(
        self,
        base_url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 60.0,
        max_idle: int = 16,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        parts = split_base_url(base_url)
        self.base_url = base_url.rstrip("/")
        self._tls = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._tls else 80)
        default_port = 443 if self._tls else 80
        host = f"[{self._host}]" if ":" in self._host else self._host
        self._host_header = host if self._port == default_port else f"{host}:{self._port}"
        self._prefix = parts.path.rstrip("/")
        self._ssl = (ssl_context or ssl.create_default_context()) if self._tls else None
        self.headers = dict(headers or {})
        self.timeout = timeout
        self._max_idle = max_idle
        self._idle: list[_Conn] = []
        self._closed = False

    async def __aenter__(self) -> "AsyncHTTPClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for c in idle:
            c.close()
        for c in idle:
            try:
                await c.writer.wait_closed()
            except Exception:  # noqa: BLE001
                pass

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
        if self._closed:
            raise RuntimeError("the HTTP client is closed")
        target = self._prefix + (path if path.startswith("/") else "/" + path)
        if query:
            q = {k: v for k, v in query.items() if v is not None}
            if q:
                target += "?" + urlencode(q)
        hdrs = {"Accept": "application/json", **self.headers, **(headers or {})}
        body = encode_body(method, json_body, hdrs)
        head = self._head(method.upper(), target, hdrs, len(body))
        return await asyncio.wait_for(
            self._exchange(method.upper(), head + body),
            timeout if timeout is not None else self.timeout,
        )

    def _head(self, method: str, target: str, headers: Mapping[str, str], length: int) -> bytes:
        lines = [f"{method} {target} HTTP/1.1", f"Host: {self._host_header}", f"User-Agent: {USER_AGENT}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        if length or method in ("POST", "PUT", "PATCH"):
            lines.append(f"Content-Length: {length}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def _exchange(self, method: str, raw: bytes) -> HTTPResponse:
        conn = await self._acquire()
        try:
            try:
                resp, keep = await self._send(conn, method, raw)
            except _StaleConnection:
                conn.close()
                conn = await self._connect()
                resp, keep = await self._send(conn, method, raw)
        except BaseException:
            # Cancelled, timed out or broken: the socket may be mid-response, never reuse it.
            conn.close()
            raise
        if keep and not self._closed and len(self._idle) < self._max_idle:
            conn.reused = True
            self._idle.append(conn)
        else:
            conn.close()
        return resp

    async def _acquire(self) -> _Conn:
        while self._idle:
            conn = self._idle.pop()
            if conn.usable():
                return conn
            conn.close()
        return await self._connect()

    async def _connect(self) -> _Conn:
        reader, writer = await asyncio.open_connection(
            self._host,
            self._port,
            ssl=self._ssl,
            server_hostname=self._host if self._ssl else None,
            limit=_LINE_LIMIT,
        )
        return _Conn(reader, writer)

    async def _send(self, conn: _Conn, method: str, raw: bytes) -> tuple[HTTPResponse, bool]:
        status, headers, keep = await self._send_head(conn, raw)
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            body = b""
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            body = await self._read_chunked(conn.reader)
        elif "content-length" in headers:
            body = await conn.reader.readexactly(int(headers["content-length"]))
        else:
            body = await conn.reader.read()
            keep = False
        return HTTPResponse(status, headers, body), keep

    async def _send_head(self, conn: _Conn, raw: bytes) -> tuple[int, dict[str, str], bool]:
        """Sends a request; returns the response's status, headers and whether it keeps alive."""
        try:
            conn.writer.write(raw)
            await conn.writer.drain()
            status_line = await conn.reader.readline()
        except (ConnectionError, BrokenPipeError):
            if conn.reused:
                raise _StaleConnection() from None
            raise
        if not status_line:
            if conn.reused:
                raise _StaleConnection()
            raise ConnectionError("the server closed the connection without answering")
        parts = status_line.decode("latin-1").split(None, 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/"):
            raise ConnectionError(f"malformed HTTP status line {status_line[:80]!r}")
        version, status = parts[0], int(parts[1])
        headers: dict[str, str] = {}
        while True:
            line = await conn.reader.readline()
            if not line:
                raise ConnectionError("the connection closed inside the response headers")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        connection = headers.get("connection", "").lower()
        keep = "close" not in connection and (version != "HTTP/1.0" or "keep-alive" in connection)
        return status, headers, keep

    async def stream_lines(
        self,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        on_headers: Callable[[Mapping[str, str]], None] | None = None,
    ) -> AsyncIterator[bytes]:
        """``GET`` a streamed response on its own connection and yield it line by line (without
        the newline) as it arrives; ``on_headers`` sees the response headers first. An error
        status raises ``StreamError`` with the response."""
        target = self._prefix + (path if path.startswith("/") else "/" + path)
        q = {k: v for k, v in (query or {}).items() if v is not None}
        if q:
            target += "?" + urlencode(q)
        head = self._head("GET", target, {"Accept": "application/x-ndjson", **self.headers}, 0)
        conn = await self._connect()
        try:
            status, headers, _ = await asyncio.wait_for(self._send_head(conn, head), self.timeout)
            if status >= 400:
                body = await asyncio.wait_for(
                    self._read_chunked(conn.reader)
                    if "chunked" in headers.get("transfer-encoding", "").lower()
                    else conn.reader.readexactly(int(headers.get("content-length", "0"))),
                    self.timeout,
                )
                raise StreamError(HTTPResponse(status, headers, body))
            if on_headers is not None:
                on_headers(headers)
            pending = b""
            async for chunk in self._chunks(conn.reader, headers):
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    yield line
        finally:
            conn.close()

    @classmethod
    async def _chunks(
        cls, reader: asyncio.StreamReader, headers: Mapping[str, str]
    ) -> AsyncIterator[bytes]:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            async for chunk in cls._chunked(reader):
                yield chunk
            return
        while chunk := await reader.read(1 << 16):
            yield chunk

    @staticmethod
    async def _chunked(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
        """A chunked body's chunks, through its trailers (the connection can serve again)."""
        while True:
            size_line = await reader.readline()
            if not size_line:
                raise ConnectionError("the connection closed inside a chunked body")
            size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return
            yield await reader.readexactly(size)
            await reader.readexactly(2)

    @classmethod
    async def _read_chunked(cls, reader: asyncio.StreamReader) -> bytes:
        return b"".join([chunk async for chunk in cls._chunked(reader)])

