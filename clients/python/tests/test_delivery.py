"""Delivery that cannot strand, with the client's DEFAULT settings, against a REAL gateway over
real sockets: long polls cut off just as a request is handed over lose nothing, a withdrawn
request stops its handler, and the sample stream resumes from its cursor."""

from __future__ import annotations

import asyncio
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

        async def engine(p: PendingRequest) -> Completion:
            return Completion(HELLO, logprobs=logprobs_for(HELLO))

        stop = asyncio.Event()
        worker = asyncio.ensure_future(self.client.serve_requests(engine, stop_event=stop, poll_wait=0.5))
        agents = AsyncHTTPClient(self.gw.url, timeout=60)
        try:
            # Bounded well below the 60 s lease the agent waited out before.
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
        stats = await asyncio.wait_for(worker, 10)
        self.assertEqual(resp.status, 200)
        self.assertEqual(lost, 1)
        self.assertEqual((stats.completed, stats.dropped), (1, 0))


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
