"""Delivery that cannot strand, with the client's DEFAULT settings, against a REAL gateway over
real sockets: long polls cut off just as a request is handed over lose nothing, a withdrawn
request stops its handler, and the sample stream resumes from its cursor."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import socket
import time
import unittest
import uuid

try:
    from . import support
except ImportError:  # run from inside tests/
    import support  # type: ignore[no-redef]

from rollgate_client import AsyncHTTPClient, Completion, PendingRequest, RollgateClient, RollgateError

HELLO, logprobs_for = support.HELLO, support.logprobs_for


class LongPollRaceTest(unittest.IsolatedAsyncioTestCase):
    """Without acknowledgement, 52 of 300 requests whose long poll was cut off stranded."""

    async def asyncSetUp(self) -> None:
        # Started on a thread: the start blocks, and the test's event loop reports slow callbacks.
        self.gw = await asyncio.to_thread(support.start_gateway)  # defaults: 10 s ack timeout
        self.client = RollgateClient(self.gw.url)  # the client's defaults

    async def asyncTearDown(self) -> None:
        await self.client.close()
        await asyncio.to_thread(self.gw.stop)

    async def test_long_poll_race_strands_none_of_1000(self) -> None:
        rollouts = [await self.client.create_rollout(id=f"race-{uuid.uuid4().hex[:6]}-{i}") for i in range(50)]
        agents = AsyncHTTPClient(self.gw.url, timeout=300, max_idle=0)

        async def agent(i: int) -> int:
            r = rollouts[i % len(rollouts)]
            resp = await agents.request(
                "POST",
                f"/rollout/{r.id}/v1/chat/completions",
                json_body={"model": "policy", "messages": [{"role": "user", "content": f"question {i}"}]},
                headers={"Authorization": f"Bearer {r.token}"},
            )
            return resp.status

        # Trainers whose long polls are cut off at random moments, some just as a request is
        # handed over: what such a poll received is lost with it.
        cut_off = 0
        lost_with_poll = 0
        flaky_until = asyncio.Event()

        async def flaky_poller() -> None:
            nonlocal cut_off, lost_with_poll
            rng = random.Random()
            while not flaky_until.is_set():
                wait = rng.uniform(0.05, 0.5)
                poll = asyncio.ensure_future(self.client.next_request(wait=wait))
                await asyncio.sleep(rng.uniform(0, wait))
                if poll.done():
                    if not poll.cancelled() and poll.exception() is None and poll.result() is not None:
                        lost_with_poll += 1  # the worker "crashed" holding it
                    continue
                poll.cancel()
                cut_off += 1
                await asyncio.gather(poll, return_exceptions=True)

        pollers = [asyncio.ensure_future(flaky_poller()) for _ in range(8)]
        calls = []
        for i in range(1000):  # agents arrive while the polls are being cut off
            calls.append(asyncio.ensure_future(agent(i)))
            if i % 20 == 19:
                await asyncio.sleep(0.05)
        await asyncio.sleep(1)
        flaky_until.set()
        await asyncio.gather(*pollers)

        # Now a healthy worker with default settings: it must get every request, stranded or not.
        async def handler(p: PendingRequest) -> Completion:
            return Completion(HELLO, logprobs_for(HELLO))

        stop = asyncio.Event()
        worker = asyncio.ensure_future(self.client.serve_requests(handler, stop_event=stop))
        statuses = await asyncio.wait_for(asyncio.gather(*calls), 240)
        stop.set()
        stats = await asyncio.wait_for(worker, 30)
        await agents.close()

        stranded = sum(1 for s in statuses if s != 200)
        self.assertEqual(stranded, 0, f"{stranded} of 1000 agent requests did not get their answer")
        status = await self.client.status()
        self.assertGreater(cut_off, 0)
        self.assertGreater(lost_with_poll, 0, "some requests went down with their poll")
        # Every request that went down with a poll, or was on the wire when it was cut off, was
        # offered again (a typical run: 150 polls cut off, 47 + 20 requests redelivered).
        self.assertGreaterEqual(status.extra["requests"]["redelivered"], lost_with_poll)
        self.assertEqual(status.pending_requests, 0)
        self.assertEqual(stats.completed, 1000)


class WithdrawnTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.gw = await asyncio.to_thread(support.start_gateway, args=["--abandon-grace", "0.3"])
        self.client = RollgateClient(self.gw.url)

    async def asyncTearDown(self) -> None:
        await self.client.close()
        await asyncio.to_thread(self.gw.stop)

    async def test_agent_gone_cancels_the_handler_and_a_late_complete_is_410(self) -> None:
        r = await self.client.create_rollout()
        started = asyncio.Event()
        cancelled = asyncio.Event()

        async def slow_engine(p: PendingRequest) -> Completion:
            started.set()
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return Completion(HELLO)

        stop = asyncio.Event()
        worker = asyncio.ensure_future(
            self.client.serve_requests(slow_engine, stop_event=stop, poll_wait=0.5, lease=0.9)
        )
        # An agent that sends its request and hangs up.
        sock = socket.create_connection(("127.0.0.1", self.gw.port))
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
        sock.sendall(
            f"POST /rollout/{r.id}/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{self.gw.port}\r\n"
            f"Authorization: Bearer {r.token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n".encode() + body
        )
        await asyncio.wait_for(started.wait(), 15)
        sock.close()
        await asyncio.wait_for(cancelled.wait(), 10)  # the renewal learned of it: 410
        stop.set()
        stats = await asyncio.wait_for(worker, 10)
        self.assertEqual((stats.withdrawn, stats.completed, stats.failed), (1, 0, 0))

        # The same seen by hand: a late complete gets 410 with the reason.
        sock = socket.create_connection(("127.0.0.1", self.gw.port))
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "again"}]}).encode()
        sock.sendall(
            f"POST /rollout/{r.id}/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{self.gw.port}\r\n"
            f"Authorization: Bearer {r.token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n".encode() + body
        )
        pending = await self.client.next_request(wait=15, rollout=r.id)
        assert pending is not None
        await self.client.ack(pending.request_id)
        sock.close()
        deadline = time.monotonic() + 10
        while (await self.client.status()).pending_requests and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        with self.assertRaises(RollgateError) as late:
            await self.client.complete(pending.request_id, HELLO)
        self.assertEqual(late.exception.status, 410)
        self.assertIn("agent disconnected", late.exception.message)


async def _one_turn_served(url: str, client: RollgateClient, r) -> tuple:  # noqa: ANN001
    """One agent turn on ``r`` while ``client.serve_requests`` answers it (HELLO): the agent's
    answer, bounded well below the 60 s lease an agent waited out when an answer was lost, and
    what the worker did."""

    async def engine(p: PendingRequest) -> Completion:
        return Completion(HELLO, logprobs=logprobs_for(HELLO))

    stop = asyncio.Event()
    worker = asyncio.ensure_future(client.serve_requests(engine, stop_event=stop, poll_wait=0.5))
    agents = AsyncHTTPClient(url, timeout=60)
    try:
        resp = await asyncio.wait_for(
            agents.request(
                "POST",
                f"/rollout/{r.id}/v1/chat/completions",
                json_body={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
                headers={"Authorization": f"Bearer {r.token}"},
            ),
            20,
        )
    finally:
        await agents.close()
        stop.set()
    return resp, await asyncio.wait_for(worker, 10)


class AckLostTest(unittest.IsolatedAsyncioTestCase):
    """An ack that reached the gateway but whose answer was lost used to drop the request: the
    gateway held it leased to nobody, and its agent waited out the lease (60 s)."""

    async def asyncSetUp(self) -> None:
        self.gw = await asyncio.to_thread(support.start_gateway)
        self.client = RollgateClient(self.gw.url)

    async def asyncTearDown(self) -> None:
        await self.client.close()
        await asyncio.to_thread(self.gw.stop)

    async def test_a_lost_ack_answer_still_gets_the_request_answered(self) -> None:
        r = await self.client.create_rollout()
        real_ack = self.client.ack
        lost = 0

        async def ack_with_lost_answer(request_id: str, lease: float | None = None) -> dict:
            nonlocal lost
            granted = await real_ack(request_id, lease)  # the gateway granted the lease ...
            if lost == 0:
                lost += 1
                raise ConnectionResetError("the answer to the ack was lost")  # ... we never heard
            return granted

        self.client.ack = ack_with_lost_answer  # type: ignore[method-assign]
        real_next = self.client.next_request

        async def two_step_next(*args, **kwargs) -> PendingRequest | None:  # noqa: ANN002, ANN003
            kwargs["ack"] = False  # a gateway without `next?ack=1`: the worker acknowledges
            return await real_next(*args, **kwargs)

        self.client.next_request = two_step_next  # type: ignore[method-assign]

        resp, stats = await _one_turn_served(self.gw.url, self.client, r)
        self.assertEqual(resp.status, 200)
        self.assertEqual(lost, 1)
        self.assertEqual((stats.completed, stats.dropped), (1, 0))


class LeasedNextTest(unittest.IsolatedAsyncioTestCase):
    """``next_request(ack=True)``: the request comes leased, so a worker's turn is ``next`` +
    ``complete``; a lost answer is offered again once its (short) lease lapses."""

    async def asyncSetUp(self) -> None:
        self.gw = await asyncio.to_thread(support.start_gateway, args=["--ack-timeout", "0.3"])
        self.client = RollgateClient(self.gw.url)

    async def asyncTearDown(self) -> None:
        await self.client.close()
        await asyncio.to_thread(self.gw.stop)

    async def test_the_worker_takes_requests_leased_and_never_acks(self) -> None:
        r = await self.client.create_rollout()
        calls: list[str] = []
        for name in ("ack", "renew"):
            real = getattr(self.client, name)

            async def counted(*args, _real=real, _name=name, **kwargs):  # noqa: ANN002, ANN003, ANN202
                calls.append(_name)
                return await _real(*args, **kwargs)

            setattr(self.client, name, counted)
        resp, stats = await _one_turn_served(self.gw.url, self.client, r)
        self.assertEqual(resp.status, 200)
        self.assertEqual((stats.completed, stats.errors), (1, 0))
        self.assertEqual(calls, [], "a short turn: next and complete, no ack, no renewal")

    async def test_a_lost_leased_answer_is_offered_again_after_its_lease(self) -> None:
        r = await self.client.create_rollout()
        agents = AsyncHTTPClient(self.gw.url, timeout=60)
        agent = asyncio.ensure_future(
            agents.request(
                "POST",
                f"/rollout/{r.id}/v1/chat/completions",
                json_body={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
                headers={"Authorization": f"Bearer {r.token}"},
            )
        )
        try:
            lost = await self.client.next_request(10, r.id, lease=1.5, ack=True, weight_version=4)
            assert lost is not None  # the worker holding it "crashed": nobody acks or completes
            self.assertEqual(lost.lease_s, 1.5)
            assert lost.expires_at is not None
            self.assertAlmostEqual(lost.expires_at / 1000, time.time() + 1.5, delta=1.0)
            await asyncio.sleep(0.8)  # past the ack timeout: still under its lease
            self.assertIsNone(await self.client.next_request(0, r.id, ack=True))
            again = await self.client.next_request(10, r.id, ack=True)
            assert again is not None
            self.assertEqual(again.request_id, lost.request_id)
            self.assertGreaterEqual(time.time() * 1000, lost.expires_at - 100)
            await self.client.complete(again.request_id, HELLO, logprobs=logprobs_for(HELLO))
            self.assertEqual((await agent).status, 200)
            [sample] = await self.client.finish_rollout(r.id, reward=1.0)
            self.assertEqual(sum(sample.loss_mask), len(HELLO), "its ids carry loss once")
            self.assertEqual(sample.turn_spans[0]["weight_version"], 4, "the first lease's")
        finally:
            agent.cancel()
            await asyncio.gather(agent, return_exceptions=True)
            await agents.close()
        with self.assertRaises(ValueError):
            await self.client.next_request(0, weight_version=1)


class CompleteLostTest(unittest.IsolatedAsyncioTestCase):
    """A complete whose answer died with its replica made the agent wait out the whole lease
    (60 s, 2 of 4 runs): the client did not send it again. Now it does, and the gateway, which had
    accepted it, says ``resent``: one turn, one answer."""

    async def asyncSetUp(self) -> None:
        self.gw = await asyncio.to_thread(support.start_gateway)
        self.client = RollgateClient(self.gw.url)

    async def asyncTearDown(self) -> None:
        await self.client.close()
        await asyncio.to_thread(self.gw.stop)

    async def test_a_lost_complete_is_sent_again_and_lands_once(self) -> None:
        r = await self.client.create_rollout()
        http = self.client._http
        real_request = http.request
        sent: list[int] = []

        async def request_with_lost_answer(method: str, path: str, **kw):  # noqa: ANN003
            resp = await real_request(method, path, **kw)
            if path.endswith("/complete"):
                sent.append(resp.status)
                if len(sent) == 1:  # the gateway took it; its answer never arrived
                    raise ConnectionResetError("the answer to the complete was lost")
            return resp

        http.request = request_with_lost_answer  # type: ignore[method-assign]

        resp, stats = await _one_turn_served(self.gw.url, self.client, r)
        self.assertEqual(resp.status, 200)
        self.assertEqual(sent, [200, 200], "sent twice, accepted both times")
        self.assertEqual((stats.completed, stats.dropped, stats.failed), (1, 0, 0))
        info = await self.client.get_rollout(r.id)
        self.assertEqual(info["turns"], {"total": 1, "done": 1, "pending": 0, "failed": 0})


class _CuttableProxy:
    """A loopback TCP proxy whose open connections the test can cut (a balancer's restart, a
    network blip): nothing else about the connection changes."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.writers: list[asyncio.StreamWriter] = []

    async def start(self) -> str:
        async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                while data := await reader.read(65536):
                    writer.write(data)
                    await writer.drain()
            except (ConnectionError, asyncio.CancelledError):
                pass
            finally:
                writer.close()

        async def accept(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
            up_r, up_w = await asyncio.open_connection("127.0.0.1", self.port)
            self.writers += [client_w, up_w]
            await asyncio.gather(pipe(client_r, up_w), pipe(up_r, client_w))

        self.server = await asyncio.start_server(accept, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    def cut(self) -> None:
        for w in self.writers:
            w.transport.abort()
        self.writers.clear()

    async def close(self) -> None:
        self.cut()
        self.server.close()


class IdleStreamTest(unittest.IsolatedAsyncioTestCase):
    """The sample stream sent no headers until a sample existed: the client timed out, reconnected
    without its cursor and missed samples finished meanwhile; a cursor ahead of the newest sample
    (a gateway restarted on an empty journal) skipped silently."""

    async def asyncSetUp(self) -> None:
        self.gw = await asyncio.to_thread(support.start_gateway)
        self.proxy = _CuttableProxy(self.gw.port)
        self.client = RollgateClient(await self.proxy.start())
        # The trainer answers directly (the proxy is cut under the sample stream only).
        self.trainer = RollgateClient(self.gw.url)

        async def engine(p: PendingRequest) -> Completion:
            return Completion(HELLO, logprobs=logprobs_for(HELLO))

        self.stop = asyncio.Event()
        self.worker = asyncio.ensure_future(
            self.trainer.serve_requests(engine, stop_event=self.stop, poll_wait=0.5)
        )

    async def asyncTearDown(self) -> None:
        self.stop.set()
        await self.worker
        await self.trainer.close()
        await self.client.close()
        await self.proxy.close()
        await asyncio.to_thread(self.gw.stop)

    async def finished(self, n: int) -> str:
        """A rollout of one turn, finished: one sample."""
        r = await self.trainer.create_rollout(id=f"idle-{uuid.uuid4().hex[:6]}-{n}")
        await asyncio.to_thread(support.chat, r.base_url, [{"role": "user", "content": f"n{n}"}], token=r.token)
        await self.trainer.finish_rollout(r.id, reward=float(n))
        return r.id

    async def test_an_idle_stream_has_its_head_and_misses_nothing_across_a_cut(self) -> None:
        heads: list[dict] = []
        lines = self.client._http.stream_lines("/api/samples/stream", on_headers=heads.append)
        first = asyncio.ensure_future(lines.__anext__())
        # No sample exists, and the head is there (bounded; it used to wait for the first sample).
        for _ in range(100):
            if heads:
                break
            await asyncio.sleep(0.05)
        self.assertEqual(heads[0].get("x-rollgate-cursor"), "0")
        first.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await first
        await lines.aclose()

        got: list[str] = []
        stream = self.client.stream_samples(retry_delay=2.0)
        reading = asyncio.ensure_future(stream.__anext__())
        await asyncio.sleep(0.5)  # the stream is open, its cursor from its head
        self.proxy.cut()
        # Finished while the client waits to reconnect: it must still come, from the cursor.
        missed = await self.finished(1)
        got.append((await asyncio.wait_for(reading, 30)).rollout_id)
        later = await self.finished(2)
        got.append((await asyncio.wait_for(stream.__anext__(), 30)).rollout_id)
        await stream.aclose()
        self.assertEqual(got, [missed, later])

    async def test_a_cursor_ahead_of_the_log_is_an_error_that_says_so(self) -> None:
        await self.finished(1)
        with self.assertRaises(RollgateError) as ahead:
            await self.client.stream_samples(after=1_000).__anext__()
        self.assertEqual(ahead.exception.status, 409)
        self.assertIn("ahead of the newest sample of this gateway's log (1)", ahead.exception.message)
        self.assertIn("after=1", ahead.exception.message)


class SampleStreamTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.gw = support.gateway()
        self.client = RollgateClient(self.gw.url)

    async def asyncTearDown(self) -> None:
        await self.client.close()

    async def test_stream_samples_resumes_from_its_cursor(self) -> None:
        tag = uuid.uuid4().hex[:6]

        async def handler(p: PendingRequest) -> Completion:
            return Completion(HELLO, logprobs_for(HELLO))

        stop = asyncio.Event()
        worker = asyncio.ensure_future(self.client.serve_requests(handler, stop_event=stop, poll_wait=0.5))
        stream = self.client.stream_samples()
        first = asyncio.ensure_future(stream.__anext__())

        async def produce(i: int) -> None:
            r = await self.client.create_rollout(id=f"stream-{tag}-{i}")
            await asyncio.to_thread(support.chat, r.base_url, [{"role": "user", "content": f"n{i}"}], token=r.token)
            await self.client.finish_rollout(r.id, reward=float(i))

        await asyncio.sleep(0.3)  # the stream is open before anything finishes
        for i in range(6):
            await produce(i)
        mine = [await first]
        is_ours = lambda s: (s.rollout_id or "").startswith(f"stream-{tag}-")  # noqa: E731
        async for s in stream:
            mine.append(s)
            if sum(map(is_ours, mine)) == 3:
                break
        await stream.aclose()
        # A new stream from the last cursor: the rest, once.
        async for s in self.client.stream_samples(after=mine[-1].cursor):
            mine.append(s)
            if sum(map(is_ours, mine)) == 6:
                break
        stop.set()
        await worker
        ours = [s for s in mine if is_ours(s)]
        self.assertEqual([s.rollout_id for s in ours], [f"stream-{tag}-{i}" for i in range(6)])
        cursors = [s.cursor for s in mine]
        self.assertEqual(cursors, sorted(set(cursors)), "increasing, no repeats")


if __name__ == "__main__":
    unittest.main()
