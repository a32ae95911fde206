"""Both HTTP transports (the standard-library one and the httpx one, when httpx is importable)
against a scripted raw-socket server: framing, keep-alive, timeouts, error mapping; stale
keep-alive connections for the standard-library one. No gateway needed."""

from __future__ import annotations

import asyncio
import json
import unittest
from typing import Any

try:
    from . import support  # noqa: F401 - puts clients/python on sys.path
except ImportError:
    import support  # type: ignore[no-redef] # noqa: F401

from rollgate_client import AsyncHTTPClient, RollgateClient, RollgateError
from rollgate_client.http_client import open_http_client

try:
    from rollgate_client.httpx_transport import HttpxHTTPClient
except ImportError:  # a bare standard library: only the fallback is tested
    HttpxHTTPClient = None  # type: ignore[assignment,misc]


class ScriptedServer:
    """Answers by path; counts connections and requests per connection."""

    def __init__(self) -> None:
        self.connections = 0
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        self.disconnects = 0

    async def start(self) -> str:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def stop(self) -> None:
        self.server.close()
        await self.server.wait_closed()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        served = 0
        try:
            while True:
                line = await reader.readline()
                if not line:
                    self.disconnects += 1
                    return
                method, target, _ = line.decode().split(" ", 2)
                headers: dict[str, str] = {}
                while (h := await reader.readline()) not in (b"\r\n", b""):
                    k, _, v = h.decode().partition(":")
                    headers[k.strip().lower()] = v.strip()
                body = await reader.readexactly(int(headers.get("content-length", 0)))
                self.requests.append((method, target, headers, body))
                served += 1
                path = target.split("?")[0]
                if path == "/stale" and served == 2:
                    writer.close()  # the server dropped the idle keep-alive connection
                    return
                if path == "/slow":
                    try:
                        await asyncio.sleep(5)
                    except asyncio.CancelledError:
                        return
                if not await self.respond(path, target, body, writer):
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            self.disconnects += 1
        except asyncio.CancelledError:
            pass  # the test's loop is ending with this connection still open
        finally:
            writer.close()

    async def respond(self, path: str, target: str, body: bytes, writer: asyncio.StreamWriter) -> bool:
        def send(raw: bytes) -> None:
            writer.write(raw)

        if path == "/chunked":
            payload = json.dumps({"ok": True, "echo": target}).encode()
            half = len(payload) // 2
            send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
            for part in (payload[:half], payload[half:]):
                send(f"{len(part):x};ext=1\r\n".encode() + part + b"\r\n")
            send(b"0\r\nX-Trailer: 1\r\n\r\n")
        elif path == "/close":
            send(b'HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}')
            await writer.drain()
            return False
        elif path == "/http10":
            send(b'HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{"v": 10}')
            await writer.drain()
            return False
        elif path.endswith("/empty"):
            send(b"HTTP/1.1 204 No Content\r\n\r\n")
        elif path == "/error":
            err = json.dumps({"error": {"type": "conflict", "message": "nope"}}).encode()
            send(b"HTTP/1.1 409 Conflict\r\nContent-Length: %d\r\n\r\n" % len(err) + err)
        elif path == "/text-error":
            send(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 7\r\n\r\nupstrea")
        else:
            payload = json.dumps({"path": path, "body": body.decode()}).encode()
            send(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(payload) + payload)
        await writer.drain()
        return True


class TransportCases:
    """What both transports must do; ``client`` is the transport class under test."""

    client: Any = AsyncHTTPClient

    async def asyncSetUp(self) -> None:
        self.srv = ScriptedServer()
        self.url = await self.srv.start()
        self.http = self.client(self.url + "/prefix/", headers={"X-Test": "1"}, timeout=5)

    async def asyncTearDown(self) -> None:
        await self.http.close()
        await self.srv.stop()

    async def test_keep_alive_reuses_one_connection(self) -> None:
        for i in range(3):
            r = await self.http.request("POST", "/x", json_body={"i": i}, query={"a": 1, "b": None})
            self.assertEqual(r.status, 200)
            self.assertEqual(r.json(), {"path": "/prefix/x", "body": json.dumps({"i": i}, separators=(",", ":"))})
        self.assertEqual(self.srv.connections, 1)
        method, target, headers, _ = self.srv.requests[0]
        self.assertEqual((method, target), ("POST", "/prefix/x?a=1"))
        self.assertEqual(headers["x-test"], "1")
        self.assertEqual(headers["content-type"], "application/json")
        self.assertEqual(headers["host"], self.url.split("//")[1])

    async def test_chunked_and_no_body(self) -> None:
        plain = self.client(self.url)
        try:
            r = await plain.request("GET", "/chunked", query={"q": "x y"})
            self.assertEqual(r.json(), {"ok": True, "echo": "/chunked?q=x+y"})
            r = await plain.request("GET", "/empty")
            self.assertEqual((r.status, r.body), (204, b""))
            r = await plain.request("GET", "/again")
            self.assertEqual(r.status, 200)
            self.assertEqual(self.srv.connections, 1)
        finally:
            await plain.close()

    async def test_connection_close_and_http10_are_not_reused(self) -> None:
        plain = self.client(self.url)
        try:
            self.assertEqual((await plain.request("GET", "/close")).status, 200)
            self.assertEqual((await plain.request("GET", "/http10")).json(), {"v": 10})
            self.assertEqual((await plain.request("GET", "/x")).status, 200)
            self.assertEqual(self.srv.connections, 3)
        finally:
            await plain.close()

    async def test_timeout_closes_the_connection(self) -> None:
        plain = self.client(self.url)
        try:
            with self.assertRaises(asyncio.TimeoutError):
                await plain.request("GET", "/slow", timeout=0.2)
            self.assertEqual((await plain.request("GET", "/x")).status, 200)
            self.assertEqual(self.srv.connections, 2, "the timed-out connection was not reused")
        finally:
            await plain.close()

    async def test_unreachable_server_is_a_connection_error(self) -> None:
        await self.srv.stop()
        with self.assertRaises(ConnectionError):
            await self.http.request("GET", "/x")

    def test_bad_base_url(self) -> None:
        with self.assertRaises(ValueError):
            self.client("localhost:7860")


class BuiltinTransportTest(TransportCases, unittest.IsolatedAsyncioTestCase):
    client = AsyncHTTPClient

    async def test_stale_keep_alive_connection_is_retried_once(self) -> None:
        plain = AsyncHTTPClient(self.url)
        try:
            self.assertEqual((await plain.request("GET", "/stale")).status, 200)
            # Second request on the same connection: the server closes it without answering.
            r = await plain.request("GET", "/stale")
            self.assertEqual(r.status, 200)
            self.assertEqual(self.srv.connections, 2)
        finally:
            await plain.close()

    async def test_client_errors(self) -> None:
        async with RollgateClient(self.url) as c:
            with self.assertRaises(RollgateError) as e:
                await c._call("GET", "/error")
            self.assertEqual((e.exception.status, e.exception.type, e.exception.message), (409, "conflict", "nope"))
            with self.assertRaises(RollgateError) as t:
                await c._call("GET", "/text-error")
            self.assertEqual((t.exception.status, t.exception.type, t.exception.message), (502, "http_error", "upstrea"))
            self.assertIsNone(await c._call("GET", "/api/empty"))



@unittest.skipIf(HttpxHTTPClient is None, "httpx is not importable here (the fallback is tested)")
class HttpxTransportTest(TransportCases, unittest.IsolatedAsyncioTestCase):
    client = HttpxHTTPClient

    def test_chosen_when_importable(self) -> None:
        self.assertIsInstance(open_http_client(self.url), HttpxHTTPClient)


class ChoiceTest(unittest.TestCase):
    def test_builtin_when_asked_or_without_httpx(self) -> None:
        import os

        os.environ["ROLLGATE_CLIENT_TRANSPORT"] = "builtin"
        try:
            self.assertIsInstance(open_http_client("http://127.0.0.1:1"), AsyncHTTPClient)
        finally:
            del os.environ["ROLLGATE_CLIENT_TRANSPORT"]
        if HttpxHTTPClient is None:
            self.assertIsInstance(open_http_client("http://127.0.0.1:1"), AsyncHTTPClient)


if __name__ == "__main__":
    unittest.main()
