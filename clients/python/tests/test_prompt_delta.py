"""Prompts as deltas and batched calls, against a REAL gateway: the client asks for each prompt as
the ids after a request of its chain it completed (``prompt=delta``), rebuilds the whole prompt
from what it kept, and hands handlers the same ``prompt_ids`` the full form carries; what it does
not keep it fetches whole. ``next_requests``, ``ack_many`` and ``complete_many`` take several
requests per call. Plus ``PromptCache``'s bounds on its own."""

from __future__ import annotations

import asyncio
import unittest
from array import array

try:
    from . import support
except ImportError:  # run from inside tests/
    import support  # type: ignore[no-redef]

from rollgate_client import Completion, RollgateClient, RollgateError
from rollgate_client.prompt_cache import PromptCache

try:
    from .test_client import GatewayTestCase, rid
except ImportError:
    from test_client import GatewayTestCase, rid  # type: ignore[no-redef]

HELLO, HI, chat = support.HELLO, support.HI, support.chat


class PromptDeltaTest(GatewayTestCase):
    async def asyncSetUp(self) -> None:
        await super().asyncSetUp()
        # Ground truth: the whole prompt of the same request, asked by a client that keeps nothing.
        self.full = RollgateClient(self.gw.url, timeout=30, prompts="full", ids="json")

    async def asyncTearDown(self) -> None:
        await self.full.close()
        await super().asyncTearDown()

    async def turns(self, r, n: int, client: RollgateClient) -> list[list[int]]:
        """``n`` turns of one chat agent, each answered by ``client``; their prompts."""
        history = [{"role": "user", "content": "Say hello."}]
        prompts = []
        for k in range(n):
            agent = asyncio.ensure_future(asyncio.to_thread(chat, r.base_url, history, token=r.token))
            pending = await self.take_with(client, r.id)
            whole = await self.full.prompt(pending.request_id)
            self.assertEqual(pending.prompt_ids, whole.tolist(), f"turn {k}: rebuilt ≠ whole")
            prompts.append(pending.prompt_ids)
            await client.complete(pending.request_id, HELLO if k % 2 == 0 else HI)
            answer = await agent
            self.assertEqual(answer.status, 200)
            history += [{"role": "assistant", "content": answer.content}, {"role": "user", "content": f"Again {k}."}]
        return prompts

    async def take_with(self, client: RollgateClient, rollout: str):
        pending = await client.next_request(wait=15, rollout=rollout)
        self.assertIsNotNone(pending)
        assert pending is not None
        return pending

    async def test_delta_prompts_equal_the_whole_ones_and_travel_small(self) -> None:
        r = await self.new_rollout()
        prompts = await self.turns(r, 4, self.client)
        # Each prompt extends the one before it (prompt + output of the turn it continues).
        for before, after in zip(prompts, prompts[1:]):
            self.assertEqual(after[: len(before)], before)
        self.assertEqual(len(self.client.prompt_cache), 1, "one entry per chain: the latest")
        await self.client.finish_rollout(r.id, reward=1.0)
        self.created.remove(r.id)
        self.assertEqual(len(self.client.prompt_cache), 0, "a finished rollout's prompts are dropped")

    async def test_a_lost_cache_fetches_the_whole_prompt(self) -> None:
        r = await self.new_rollout()
        history = [{"role": "user", "content": "Say hello."}]
        agent = asyncio.ensure_future(asyncio.to_thread(chat, r.base_url, history, token=r.token))
        p1 = await self.take_with(self.client, r.id)
        await self.client.complete(p1.request_id, HELLO)
        answer = await agent
        self.client.prompt_cache.clear()  # the trainer restarted its cache
        history += [{"role": "assistant", "content": answer.content}, {"role": "user", "content": "More."}]
        agent = asyncio.ensure_future(asyncio.to_thread(chat, r.base_url, history, token=r.token))
        p2 = await self.take_with(self.client, r.id)
        self.assertEqual(p2.prompt_ids, (await self.full.prompt(p2.request_id)).tolist())
        self.assertEqual(p2.prompt_ids[: len(p1.prompt_ids) + len(HELLO)], p1.prompt_ids + HELLO)
        await self.client.complete(p2.request_id, HI)
        self.assertEqual((await agent).status, 200)

    async def test_another_client_gets_the_whole_prompt(self) -> None:
        r = await self.new_rollout()
        other = RollgateClient(self.gw.url, timeout=30)
        try:
            history = [{"role": "user", "content": "Say hello."}]
            agent = asyncio.ensure_future(asyncio.to_thread(chat, r.base_url, history, token=r.token))
            p1 = await self.take_with(self.client, r.id)
            await self.client.complete(p1.request_id, HELLO)
            answer = await agent
            history += [{"role": "assistant", "content": answer.content}, {"role": "user", "content": "More."}]
            agent = asyncio.ensure_future(asyncio.to_thread(chat, r.base_url, history, token=r.token))
            p2 = await self.take_with(other, r.id)  # did not take the first: the full form
            self.assertEqual(p2.prompt_ids, (await self.full.prompt(p2.request_id)).tolist())
            await other.complete(p2.request_id, HI)
            self.assertEqual((await agent).status, 200)
        finally:
            await other.close()

    async def test_batches_take_ack_and_complete_several(self) -> None:
        rollouts = [await self.new_rollout() for _ in range(3)]
        agents = [
            asyncio.ensure_future(asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": f"Hi {k}"}], token=r.token))
            for k, r in enumerate(rollouts)
        ]
        ours = {r.id for r in rollouts}
        taken = []
        for _ in range(50):
            taken += [p for p in await self.client.next_requests(wait=5, max=8) if p.rollout_id in ours]
            if len(taken) == 3:
                break
        self.assertEqual(sorted(p.rollout_id for p in taken), sorted(ours))
        acks = await self.client.ack_many([p.request_id for p in taken] + ["req_nope"], lease=30)
        self.assertEqual([a["lease_s"] for a in acks[:3]], [30, 30, 30])
        self.assertIsInstance(acks[3], RollgateError)
        self.assertEqual(acks[3].status, 404)
        results = await self.client.complete_many(
            [(taken[0].request_id, Completion(HELLO)), (taken[1].request_id, {"output_ids": HI}),
             (taken[2].request_id, Completion([10**9]))]
        )
        self.assertEqual([r.get("completed") for r in results[:2]], [True, True])
        self.assertIsInstance(results[2], RollgateError)
        self.assertEqual(results[2].status, 400, "an id outside the vocabulary refuses that one only")
        await self.client.complete(taken[2].request_id, HELLO)
        answers = await asyncio.gather(*agents)
        self.assertEqual(sorted(a.content for a in answers), ["Hello", "Hello", "Hi"])
        self.assertEqual(await self.client.next_requests(wait=0, max=8, rollout=rollouts[0].id), [])

    async def test_append_many(self) -> None:
        r = await self.new_rollout()
        agent = asyncio.ensure_future(
            asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "x"}], stream=True, token=r.token)
        )
        p = await self.take_with(self.client, r.id)
        [ok, bad] = await self.client.append_many([(p.request_id, HELLO[:1], 3), ("req_nope", [1])])
        self.assertEqual(ok["appended"], 1)
        self.assertIsInstance(bad, RollgateError)
        await self.client.complete(p.request_id, HELLO, weight_version=3)
        self.assertEqual((await agent).content, "Hello")


class PromptCacheTest(unittest.TestCase):
    def test_one_entry_per_chain_bounded_in_ids(self) -> None:
        cache = PromptCache(max_ids=10)
        cache.opened("a", "r1", array("i", [1, 2]), None)
        cache.completed("a", [3])
        self.assertEqual(cache.rebuild("a", 3, [4]).tolist(), [1, 2, 3, 4])
        self.assertIsNone(cache.rebuild("a", 4, [5]), "a base longer than what is kept")
        cache.opened("b", "r1", array("i", [1, 2, 3, 4]), "a")
        cache.completed("b", [5])
        self.assertEqual((len(cache), cache.ids), (1, 5), "b replaced the entry it extended")
        cache.opened("c", "r2", array("i", range(7)), None)
        cache.completed("c", [7])
        self.assertEqual((len(cache), cache.ids), (1, 8), "past 10 ids the oldest went")
        cache.opened("d", "r2", array("i", range(11)), None)
        cache.completed("d", [0])
        self.assertIsNone(cache.rebuild("d", 1, []), "a line longer than the bound is not kept")
        cache.drop_rollout("r2")
        self.assertEqual((len(cache), cache.ids), (0, 0))

    def test_a_request_not_completed_is_not_kept(self) -> None:
        cache = PromptCache()
        cache.opened("a", "r1", array("i", [1]), None)
        cache.closed("a")
        cache.completed("a", [2])
        self.assertEqual(len(cache), 0)


if __name__ == "__main__":
    unittest.main()
