"""``serve_requests`` against a REAL gateway with several concurrent agents."""

from __future__ import annotations

import asyncio
import time
import unittest
import uuid

try:
    from . import support
except ImportError:  # run from inside tests/
    import support  # type: ignore[no-redef]

from rollgate_client import Completion, PendingRequest, RollgateClient, RollgateError

HELLO, HI, IM_END = support.HELLO, support.HI, support.IM_END
chat, logprobs_for = support.chat, support.logprobs_for


class ServeRequestsTest(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.gw = support.gateway()

    async def asyncSetUp(self) -> None:
        self.client = RollgateClient(self.gw.url, timeout=30)
        self.stop = asyncio.Event()
        self.created: list[str] = []

    async def asyncTearDown(self) -> None:
        self.stop.set()
        for r in self.created:  # a failed test leaves no agent waiting on the shared gateway
            try:
                await self.client.delete_rollout(r)
            except RollgateError:
                pass
        await self.client.close()

    async def rollouts(self, n: int, tag: str) -> list:
        rs = [await self.client.create_rollout(id=f"{tag}-{uuid.uuid4().hex[:8]}-{i}") for i in range(n)]
        self.created += [r.id for r in rs]
        return rs

    async def test_concurrent_agents_are_all_served(self) -> None:
        rs = await self.rollouts(6, "serve")
        active = 0
        peak = 0
        seen: list[PendingRequest] = []

        async def handler(p: PendingRequest) -> Completion:
            nonlocal active, peak
            active += 1
            peak = max(peak, active)
            seen.append(p)
            await asyncio.sleep(0.2)  # an engine taking its time
            active -= 1
            ids = HELLO if int(p.rollout_id.rsplit("-", 1)[1]) % 2 == 0 else HI
            return Completion(ids, logprobs_for(ids), weight_version="v7")

        server = asyncio.ensure_future(self.client.serve_requests(handler, concurrency=3, stop_event=self.stop, poll_wait=0.5))
        agents = [
            asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": f"agent {i}"}], stream=i % 2 == 1, token=r.token)
            for i, r in enumerate(rs)
        ]
        t0 = time.monotonic()
        answers = await asyncio.wait_for(asyncio.gather(*agents), 30)
        elapsed = time.monotonic() - t0
        self.assertEqual([a.content for a in answers], ["Hello", "Hi"] * 3)
        self.assertEqual(peak, 3, "the workers ran handlers concurrently, never more than `concurrency`")
        self.assertLess(elapsed, 6 * 0.2, "handlers overlapped")
        self.assertEqual(sorted(p.rollout_id for p in seen), sorted(r.id for r in rs))

        self.stop.set()
        stats = await asyncio.wait_for(server, 5)
        self.assertEqual((stats.completed, stats.failed, stats.errors), (6, 0, 0))
        for i, r in enumerate(rs):
            [s] = await self.client.finish_rollout(r.id, reward=float(i))
            self.assertEqual(sum(s.loss_mask), 2)
            self.assertEqual(s.reward, float(i))
            turn = (await self.client.get_rollout(r.id))["turn_list"][0]
            self.assertEqual(turn["weight_version"], "v7")

    async def test_handler_errors_reach_the_agent_and_serving_goes_on(self) -> None:
        [ok, bad, status, invalid] = await self.rollouts(4, "errs")

        class Overloaded(Exception):
            status = 503

        async def handler(p: PendingRequest) -> Completion:
            if p.rollout_id == bad.id:
                raise RuntimeError("engine exploded")
            if p.rollout_id == status.id:
                raise Overloaded("try later")
            if p.rollout_id == invalid.id:
                return Completion([10**7])  # outside the vocabulary: the gateway refuses it
            return Completion(HELLO)

        with self.assertLogs("rollgate_client", "WARNING") as logs:
            server = asyncio.ensure_future(
                self.client.serve_requests(handler, concurrency=2, stop_event=self.stop, poll_wait=0.5)
            )
            a_ok, a_bad, a_status, a_invalid = await asyncio.wait_for(asyncio.gather(*(
                asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "hi"}]) for r in (ok, bad, status, invalid)
            )), 30)
        self.assertTrue(any("engine exploded" in line for line in logs.output))
        self.assertEqual(a_ok.content, "Hello")
        self.assertEqual(a_bad.status, 502)
        self.assertIn("engine exploded", a_bad.body["error"]["message"])
        self.assertEqual(a_status.status, 503)
        self.assertIn("try later", a_status.body["error"]["message"])
        self.assertEqual(a_invalid.status, 502)
        self.assertIn("vocabulary", a_invalid.body["error"]["message"])
        self.stop.set()
        stats = await asyncio.wait_for(server, 5)
        self.assertEqual((stats.completed, stats.failed), (1, 3))
        for r in (ok, bad, status, invalid):
            await self.client.delete_rollout(r.id)

    async def test_handler_may_return_a_mapping(self) -> None:
        [r] = await self.rollouts(1, "map")

        async def handler(p: PendingRequest):
            return {"output_ids": [9707], "logprobs": [-0.5], "finish_reason": "length"}

        server = asyncio.ensure_future(
            self.client.serve_requests(handler, rollout=r.id, stop_event=self.stop, poll_wait=0.5)
        )
        ans = await asyncio.wait_for(asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "x"}]), 30)
        self.assertEqual((ans.content, ans.finish_reason), ("Hello", "length"))
        self.stop.set()
        self.assertEqual((await asyncio.wait_for(server, 5)).completed, 1)
        await self.client.delete_rollout(r.id)

    async def test_stop_event_and_rollout_filter(self) -> None:
        [mine, other] = await self.rollouts(2, "filt")
        calls: list[str] = []

        async def handler(p: PendingRequest) -> Completion:
            calls.append(p.rollout_id)
            return Completion(HELLO)

        server = asyncio.ensure_future(
            self.client.serve_requests(handler, concurrency=2, rollout=mine.id, stop_event=self.stop, poll_wait=0.5)
        )
        foreign = asyncio.ensure_future(asyncio.to_thread(chat, other.base_url, [{"role": "user", "content": "x"}]))
        ans = await asyncio.wait_for(asyncio.to_thread(chat, mine.base_url, [{"role": "user", "content": "x"}]), 30)
        self.assertEqual(ans.content, "Hello")
        # The other rollout's request is still waiting, untouched by the filtered workers.
        p = await self.client.next_request(wait=10, rollout=other.id)
        assert p is not None
        t0 = time.monotonic()
        self.stop.set()
        stats = await asyncio.wait_for(server, 5)
        self.assertLess(time.monotonic() - t0, 0.5 + 1.5, "workers stop after their current long poll")
        self.assertEqual(stats.completed, 1)
        self.assertEqual(calls, [mine.id])
        await self.client.complete(p.request_id, HI)
        self.assertEqual((await foreign).content, "Hi")
        for r in (mine, other):
            await self.client.delete_rollout(r.id)

    async def test_workers_end_when_their_rollout_is_deleted(self) -> None:
        [r] = await self.rollouts(1, "gone")

        async def handler(p: PendingRequest) -> Completion:
            return Completion(HELLO)

        server = asyncio.ensure_future(self.client.serve_requests(handler, concurrency=2, rollout=r.id, poll_wait=0.3))
        await asyncio.sleep(0.2)
        await self.client.delete_rollout(r.id)
        stats = await asyncio.wait_for(server, 5)
        self.assertEqual(stats.completed, 0)

    async def test_cancelling_fails_the_request_in_hand(self) -> None:
        [r] = await self.rollouts(1, "cancel")
        started = asyncio.Event()

        async def handler(p: PendingRequest) -> Completion:
            started.set()
            await asyncio.sleep(60)
            return Completion(HELLO)

        server = asyncio.ensure_future(self.client.serve_requests(handler, rollout=r.id, poll_wait=0.5))
        agent = asyncio.ensure_future(asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "x"}]))
        await asyncio.wait_for(started.wait(), 15)
        server.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await server
        ans = await asyncio.wait_for(agent, 10)
        self.assertEqual(ans.status, 502)
        self.assertIn("stopped", ans.body["error"]["message"])
        await self.client.delete_rollout(r.id)

    async def test_wrong_admin_token_is_raised_not_retried(self) -> None:
        gw = await asyncio.to_thread(support.start_gateway, {"ROLLGATE_ADMIN_TOKEN": "secret"})
        try:
            async with RollgateClient(gw.url, admin_token="nope") as c:
                async def handler(p: PendingRequest) -> Completion:
                    return Completion(HELLO)

                with self.assertRaises(RollgateError) as e:
                    await asyncio.wait_for(c.serve_requests(handler, concurrency=2, poll_wait=0.2), 10)
                self.assertEqual(e.exception.status, 401)
        finally:
            await asyncio.to_thread(gw.stop)

    async def test_gateway_down_is_retried(self) -> None:
        async with RollgateClient(f"http://127.0.0.1:{support.free_port()}", timeout=2) as c:
            async def handler(p: PendingRequest) -> Completion:
                return Completion(HELLO)

            stop = asyncio.Event()
            with self.assertLogs("rollgate_client", "WARNING") as logs:
                server = asyncio.ensure_future(c.serve_requests(handler, concurrency=1, stop_event=stop, retry_delay=0.1))
                await asyncio.sleep(0.5)
                stop.set()
                stats = await asyncio.wait_for(server, 5)
            self.assertIn("polling for requests failed", logs.output[0])
            self.assertGreaterEqual(stats.errors, 2)


if __name__ == "__main__":
    unittest.main()
