"""The trainer as a teacher, against a REAL gateway started with ``--teacher self=trainer``:
``serve_teacher_requests`` answers the gateway's scoring requests with a scorer (a TEST DOUBLE
formula of position and id, so a score put at the wrong position shows), and the samples carry
``teacher_logprobs`` exactly at the trained positions in both id transports and in the tree and
calls forms; a scorer that fails leaves the positions named in ``teacher_missing``."""

from __future__ import annotations

import asyncio
import unittest

try:
    from . import support
except ImportError:  # run from inside tests/
    import support  # type: ignore[no-redef]

from rollgate_client import (
    RollgateClient,
    TeacherRequest,
    expand_calls,
    expand_tree,
    serve_teacher_requests,
)


def teacher_logprob(p: int, token: int) -> float:
    return -0.5 - ((token * 7 + p * 13) % 97) / 10


def score(req: TeacherRequest) -> list[float]:
    return [teacher_logprob(p, req.input_ids[p]) for p in req.scored_positions]


class TrainerTeacherTest(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.gw = support.start_gateway(args=["--teacher", "self=trainer", "--default-teacher", "self"])

    @classmethod
    def tearDownClass(cls) -> None:
        cls.gw.stop()

    async def rollout(self, client: RollgateClient) -> str:
        r = await client.create_rollout()
        messages = [{"role": "user", "content": "hi"}]
        agent = asyncio.ensure_future(asyncio.to_thread(support.chat, r.base_url, messages))
        p = await client.next_request(wait=10, rollout=r.id)
        await client.complete(p.request_id, support.HELLO, logprobs=[-0.5, -0.25])
        await agent
        return r.id

    async def test_teacher_logprobs_from_the_trainer(self) -> None:
        async with RollgateClient(self.gw.url, timeout=30) as client:
            stop = asyncio.Event()
            serving = asyncio.ensure_future(serve_teacher_requests(client, score, teacher="self", stop_event=stop))
            rollout = await self.rollout(client)
            [sample] = await client.finish_rollout(rollout, 1.0)
            stop.set()
            self.assertEqual(await serving, 1)
            self.assertEqual(sample.teacher, "self")
            want = [
                teacher_logprob(i, t) if m else None
                for i, (t, m) in enumerate(zip(sample.input_ids, sample.loss_mask))
            ]
            self.assertEqual(sample.teacher_logprobs, want)
            self.assertEqual(sample.teacher_missing, [])
            for ids in ("json", "base64"):
                async with RollgateClient(self.gw.url, ids=ids, timeout=30) as c:
                    [again] = await c.samples(rollout)
                    tree = await c.sample_tree(rollout)
                    calls = await c.sample_calls(rollout)
                self.assertEqual(again.teacher_logprobs, want, ids)
                for expanded in (expand_tree(tree), expand_calls(calls)):
                    self.assertEqual([s["teacher_logprobs"] for s in expanded], [want], ids)

    async def test_a_failing_scorer_names_the_missing_positions(self) -> None:
        def broken(req: TeacherRequest) -> list[float]:
            raise RuntimeError("the teacher model is not loaded")

        async with RollgateClient(self.gw.url, timeout=60) as client:
            stop = asyncio.Event()
            serving = asyncio.ensure_future(serve_teacher_requests(client, broken, teacher="self", stop_event=stop))
            rollout = await self.rollout(client)
            [sample] = await client.finish_rollout(rollout, 1.0)
            stop.set()
            await serving
            [missing] = sample.teacher_missing
            self.assertIn("the teacher model is not loaded", missing["reason"])
            span = sample.turn_spans[0]
            self.assertEqual((missing["start"], missing["end"]), (span["output_start"], span["end"]))
            self.assertTrue(all(lp is None for lp in sample.teacher_logprobs))


if __name__ == "__main__":
    unittest.main()
