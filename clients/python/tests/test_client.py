"""RollgateClient against a REAL gateway (``main.ts serve`` in a subprocess): an agent (plain
``http.client`` in a thread) talks OpenAI Chat to a rollout; the client takes its pending request,
completes it with real Qwen3 ids and collects the samples."""

from __future__ import annotations

import asyncio
import json
import time
import unittest
import uuid

try:
    from . import support
except ImportError:  # run from inside tests/
    import support  # type: ignore[no-redef]

from rollgate_client import (
    GatewayStatus,
    PendingRequest,
    Rollout,
    RollgateClient,
    RollgateError,
    Sample,
)
HELLO, SUNNY, THINK_HELLO = support.HELLO, support.SUNNY, support.THINK_HELLO
TOOL_CALL_WEATHER, WEATHER_TOOL = support.TOOL_CALL_WEATHER, support.WEATHER_TOOL
chat, logprobs_for = support.chat, support.logprobs_for


def rid(prefix: str = "t") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


class GatewayTestCase(unittest.IsolatedAsyncioTestCase):
    """One shared gateway for the class; a fresh client per test."""

    admin_token: str | None = None

    @classmethod
    def setUpClass(cls) -> None:
        cls.gw = support.gateway()

    async def asyncSetUp(self) -> None:
        self.client = RollgateClient(self.gw.url, admin_token=self.admin_token, timeout=30)
        self.created: list[str] = []

    async def asyncTearDown(self) -> None:
        for r in self.created:
            try:
                await self.client.delete_rollout(r)
            except RollgateError:
                pass
        await self.client.close()

    async def new_rollout(self, **kw) -> Rollout:
        r = await self.client.create_rollout(id=kw.pop("id", rid()), **kw)
        self.created.append(r.id)
        return r

    async def take(self, rollout: str, wait: float = 15) -> PendingRequest:
        pending = await self.client.next_request(wait=wait, rollout=rollout)
        self.assertIsNotNone(pending, "no pending request arrived")
        assert pending is not None
        return pending


class RolloutLifecycleTest(GatewayTestCase):
    async def test_lease_returns_an_abandoned_request_to_the_queue(self) -> None:
        r = await self.new_rollout()
        agent = asyncio.ensure_future(
            asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "Say hello"}], token=r.token)
        )
        first = await self.client.next_request(wait=15, rollout=r.id)
        assert first is not None
        granted = await self.client.ack(first.request_id, lease=0.3)
        self.assertEqual(granted["lease_s"], 0.3)
        # The worker holding `first` "crashes": the lease runs out and the request is offered again.
        again = await self.take(r.id, wait=15)
        self.assertEqual(again.request_id, first.request_id)
        await self.client.complete(again.request_id, HELLO, logprobs=logprobs_for(HELLO))
        ans = await agent
        self.assertEqual(ans.content, "Hello")

    async def test_create_list_get_delete(self) -> None:
        r = await self.new_rollout(metadata={"task": "t1", "k": 2}, sampling={"max_tokens": 64, "temperature": 0.7})
        self.assertTrue(r.token.startswith("rg_"))
        self.assertEqual(r.base_url, f"{self.gw.url}/rollout/{r.id}")
        self.assertEqual(r.openai_base_url, r.base_url + "/v1")

        listed = {x["id"]: x for x in await self.client.list_rollouts()}
        self.assertIn(r.id, listed)
        self.assertEqual(listed[r.id]["metadata"], {"task": "t1", "k": 2})

        info = await self.client.get_rollout(r.id)
        self.assertEqual(info["status"], "active")
        self.assertEqual(info["sampling"], {"max_tokens": 64, "temperature": 0.7})
        self.assertEqual(info["turn_list"], [])

        with self.assertRaises(RollgateError) as dup:
            await self.client.create_rollout(id=r.id)
        self.assertEqual(dup.exception.status, 409)

        self.assertEqual(await self.client.delete_rollout(r.id), {"id": r.id, "deleted": True})
        with self.assertRaises(RollgateError) as gone:
            await self.client.get_rollout(r.id)
        self.assertEqual((gone.exception.status, gone.exception.type), (404, "not_found"))

    async def test_generated_id_and_invalid_spec(self) -> None:
        r = await self.client.create_rollout()
        self.created.append(r.id)
        self.assertTrue(r.id)
        with self.assertRaises(RollgateError) as bad:
            await self.client.create_rollout(id="has spaces")
        self.assertEqual(bad.exception.status, 400)
        self.assertIn("id", bad.exception.message)

    async def test_template_settings_are_recorded_and_checked(self) -> None:
        r = await self.new_rollout(template={"enable_thinking": False})
        summary = await self.client.get_rollout(r.id)
        self.assertEqual(summary["template"], {"enable_thinking": False})
        with self.assertRaises(RollgateError) as bad:
            await self.client.create_rollout(template={"reasoning_effort": "high"})
        self.assertEqual(bad.exception.status, 400)
        self.assertIn("template.reasoning_effort", bad.exception.message)

    async def test_id_with_colon_and_dots_round_trips(self) -> None:
        r = await self.new_rollout(id=f"grp:{uuid.uuid4().hex[:6]}.0")
        self.assertEqual((await self.client.get_rollout(r.id))["id"], r.id)
        self.assertEqual(await self.client.samples(r.id), [])

    async def test_image_by_hash_says_what_is_missing(self) -> None:
        # A text-only gateway stores no image; the route still names what it needs and lacks.
        with self.assertRaises(RollgateError) as missing:
            await self.client.image("0" * 64)
        self.assertEqual(missing.exception.status, 404)
        with self.assertRaises(RollgateError) as bad:
            await self.client.image("not-a-hash")
        self.assertEqual(bad.exception.status, 400)
        self.assertIn("sha256", bad.exception.message)
        span = {"start": 3, "end": 5, "hash": "ab" * 32, "mime": "image/png", "width": 2, "height": 2}
        sample = Sample.from_json({"input_ids": [1] * 6, "loss_mask": [0] * 6, "logprobs": [0.0] * 6,
                                   "images": [span]})
        self.assertEqual(sample.images, [span])
        self.assertNotIn("images", sample.extra)

    async def test_health(self) -> None:
        self.assertTrue(await self.client.health())
        self.assertTrue(await self.client.ready())
        async with RollgateClient("http://127.0.0.1:9", timeout=2) as dead:
            self.assertFalse(await dead.health())
            self.assertFalse(await dead.ready())
            with self.assertRaises(OSError):
                await dead.list_rollouts()


class TurnTest(GatewayTestCase):
    async def test_append_streams_before_complete(self) -> None:
        r = await self.new_rollout()
        agent = asyncio.ensure_future(
            asyncio.to_thread(
                chat, r.base_url, [{"role": "user", "content": "Say hello"}], token=r.token, stream=True
            )
        )
        pending = await self.take(r.id)
        res = await self.client.append(pending.request_id, THINK_HELLO[:4])
        self.assertEqual(res["appended"], 4)
        with self.assertRaises(RollgateError) as bad:
            await self.client.complete(pending.request_id, HELLO)
        self.assertEqual(bad.exception.status, 400)
        await self.client.complete(pending.request_id, THINK_HELLO)
        ans = await agent
        self.assertEqual((ans.reasoning, ans.content), ("A", "Hello"))

    async def test_non_streaming_turn_and_samples(self) -> None:
        r = await self.new_rollout(metadata={"task": "hello"})
        agent = asyncio.ensure_future(
            asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "Say hello"}], token=r.token)
        )
        pending = await self.take(r.id)
        self.assertEqual(pending.rollout_id, r.id)
        self.assertTrue(pending.request_id.startswith("req_"))
        self.assertTrue(pending.turn_id.startswith(r.id + "."))
        self.assertGreater(len(pending.prompt_ids), 5)
        self.assertEqual(pending.prompt_ids[-3:], [151644, 77091, 198])  # "<|im_start|>assistant\n"
        self.assertIn(151645, pending.stop_token_ids)
        self.assertGreater(pending.max_tokens or 0, 0)

        lp = logprobs_for(HELLO)
        res = await self.client.complete(pending.request_id, HELLO, logprobs=lp, weight_version=3)
        self.assertTrue(res["completed"])
        ans = await agent
        self.assertEqual(ans.status, 200, ans.body)
        self.assertEqual(ans.content, "Hello")
        self.assertEqual(ans.finish_reason, "stop")
        self.assertEqual(ans.usage["completion_tokens"], 2)
        self.assertEqual(ans.usage["prompt_tokens"], len(pending.prompt_ids))

        info = await self.client.get_rollout(r.id)
        self.assertEqual(len(info["turn_list"]), 1)
        self.assertEqual(info["turn_list"][0]["weight_version"], 3)

        samples = await self.client.finish_rollout(r.id, reward=0.5)
        self.assertEqual(len(samples), 1)
        s = samples[0]
        self.assertIsInstance(s, Sample)
        self.assertEqual(s.input_ids, pending.prompt_ids + HELLO)
        self.assertEqual(sum(s.loss_mask), len(HELLO))
        self.assertEqual(s.num_sampled, len(HELLO))
        self.assertEqual(len(s.loss_mask), len(s.input_ids))
        self.assertEqual(len(s.logprobs), len(s.input_ids))
        self.assertEqual([p for p, m in zip(s.logprobs, s.loss_mask) if m], lp)
        self.assertTrue(all(p == 0 for p, m in zip(s.logprobs, s.loss_mask) if not m))
        self.assertEqual(s.prompt_length, len(pending.prompt_ids))
        self.assertEqual(s.trained_from, 0)  # a chain of its own, no prefix shared with another
        self.assertEqual((s.reward, s.branch, s.finish_reason), (0.5, "main", "stop"))
        self.assertEqual(s.turns, [pending.turn_id])
        self.assertEqual(s.metadata["task"], "hello")  # the rollout's metadata (the gateway may add labels)
        self.assertEqual(s.rollout_id, r.id)

        again = await self.client.samples(r.id)
        self.assertEqual([x.to_dict() for x in again], [x.to_dict() for x in samples])
        with self.assertRaises(RollgateError) as twice:
            await self.client.finish_rollout(r.id, reward=1)
        self.assertEqual(twice.exception.status, 409)

    async def test_streaming_turn_with_reasoning(self) -> None:
        r = await self.new_rollout()
        agent = asyncio.ensure_future(
            asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "hi"}], stream=True, token=r.token)
        )
        pending = await self.take(r.id)
        await self.client.complete(pending.request_id, THINK_HELLO, logprobs=logprobs_for(THINK_HELLO))
        ans = await agent
        self.assertEqual(ans.status, 200)
        self.assertIsNone(ans.error)
        self.assertEqual(ans.content, "Hello")
        self.assertEqual(ans.reasoning.strip(), "A")
        self.assertEqual(ans.finish_reason, "stop")
        self.assertEqual(ans.usage["completion_tokens"], len(THINK_HELLO))
        [s] = await self.client.finish_rollout(r.id)
        self.assertIsNone(s.reward)
        self.assertEqual(s.input_ids[-len(THINK_HELLO):], THINK_HELLO)
        self.assertEqual(sum(s.loss_mask), len(THINK_HELLO))

    async def test_tool_call_then_answer_is_token_faithful(self) -> None:
        r = await self.new_rollout()
        history = [{"role": "user", "content": "Weather in Paris?"}]
        first = asyncio.ensure_future(
            asyncio.to_thread(chat, r.base_url, history, tools=[WEATHER_TOOL], stream=True, token=r.token)
        )
        p1 = await self.take(r.id)
        await self.client.complete(p1.request_id, TOOL_CALL_WEATHER, logprobs=logprobs_for(TOOL_CALL_WEATHER))
        a1 = await first
        self.assertEqual(a1.finish_reason, "tool_calls")
        self.assertEqual(len(a1.tool_calls), 1)
        call = a1.tool_calls[0]
        self.assertEqual(call["function"]["name"], "get_weather")
        self.assertEqual(json.loads(call["function"]["arguments"]), {"city": "Paris"})

        history += [
            {"role": "assistant", "content": None, "tool_calls": [{"id": call["id"], "type": "function", "function": call["function"]}]},
            {"role": "tool", "tool_call_id": call["id"], "content": "sunny, 21°C"},
        ]
        second = asyncio.ensure_future(
            asyncio.to_thread(chat, r.base_url, history, tools=[WEATHER_TOOL], token=r.token)
        )
        p2 = await self.take(r.id)
        # The second prompt extends the first turn's exact ids: sampled tokens are never re-tokenized.
        self.assertEqual(p2.prompt_ids[: len(p1.prompt_ids) + len(TOOL_CALL_WEATHER)], p1.prompt_ids + TOOL_CALL_WEATHER)
        await self.client.complete(p2.request_id, SUNNY, logprobs=logprobs_for(SUNNY))
        a2 = await second
        self.assertEqual(a2.content, "Sunny in Paris.")

        # The compact tree export, expanded, is the full export (less its shared-prefix view).
        full = await self.client.tree(r.id)
        del full["shared_prefix"]
        self.assertEqual(await self.client.tree(r.id, compact=True), full)
        self.assertEqual([t["prompt_ids"] for t in full["turns"]], [p1.prompt_ids, p2.prompt_ids])

        [s] = await self.client.finish_rollout(r.id, reward=1.0)
        self.assertEqual(len(s.turns), 2)
        self.assertEqual(s.input_ids, p2.prompt_ids + SUNNY)
        self.assertEqual(sum(s.loss_mask), len(TOOL_CALL_WEATHER) + len(SUNNY))
        self.assertEqual(s.num_sampled, len(TOOL_CALL_WEATHER) + len(SUNNY))
        sampled = [i for i, m in zip(s.input_ids, s.loss_mask) if m]
        self.assertEqual(sampled, TOOL_CALL_WEATHER + SUNNY)
        self.assertEqual(
            [p for p, m in zip(s.logprobs, s.loss_mask) if m], logprobs_for(TOOL_CALL_WEATHER) + logprobs_for(SUNNY)
        )

    async def test_length_finish_and_rollout_sampling_defaults(self) -> None:
        r = await self.new_rollout(sampling={"max_tokens": 1, "temperature": 0.5, "top_p": 0.9})
        agent = asyncio.ensure_future(asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "x"}]))
        p = await self.take(r.id)
        self.assertEqual(p.max_tokens, 1)
        self.assertEqual((p.temperature, p.top_p), (0.5, 0.9))
        await self.client.complete(p.request_id, [9707], logprobs=[-0.25], finish_reason="length")
        ans = await agent
        self.assertEqual((ans.content, ans.finish_reason), ("Hello", "length"))
        [s] = await self.client.finish_rollout(r.id)
        self.assertEqual(s.finish_reason, "length")
        # The end-of-turn id the gateway appends after a cut output is context, never trained.
        self.assertEqual(sum(s.loss_mask), 1)

    async def test_next_request_times_out_with_none(self) -> None:
        r = await self.new_rollout()
        t0 = time.monotonic()
        self.assertIsNone(await self.client.next_request(wait=0.3, rollout=r.id))
        self.assertGreaterEqual(time.monotonic() - t0, 0.25)
        self.assertIsNone(await self.client.next_request(wait=0, rollout=r.id))

    async def test_cancelled_long_poll_does_not_swallow_a_request(self) -> None:
        r = await self.new_rollout()
        poll = asyncio.ensure_future(self.client.next_request(wait=30, rollout=r.id))
        await asyncio.sleep(0.2)
        poll.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await poll
        await asyncio.sleep(0.2)  # the gateway sees the disconnect and drops that waiter
        agent = asyncio.ensure_future(asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "hi"}]))
        p = await self.take(r.id)
        await self.client.complete(p.request_id, HELLO)
        self.assertEqual((await agent).content, "Hello")


class ErrorTest(GatewayTestCase):
    async def test_unknown_request_is_404(self) -> None:
        with self.assertRaises(RollgateError) as e:
            await self.client.complete("req_does_not_exist", HELLO)
        self.assertEqual((e.exception.status, e.exception.type), (404, "not_found"))
        self.assertIn("req_does_not_exist", e.exception.message)
        with self.assertRaises(RollgateError) as f:
            await self.client.fail("req_does_not_exist", "boom")
        self.assertEqual(f.exception.status, 404)

    async def test_next_request_for_unknown_rollout_is_404(self) -> None:
        with self.assertRaises(RollgateError) as e:
            await self.client.next_request(wait=0, rollout="no-such-rollout")
        self.assertEqual(e.exception.status, 404)

    async def test_double_completion_is_409_and_bad_completions_are_400(self) -> None:
        r = await self.new_rollout()
        agent = asyncio.ensure_future(asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "hi"}]))
        p = await self.take(r.id)
        with self.assertRaises(RollgateError) as vocab:
            await self.client.complete(p.request_id, [10**7])
        self.assertEqual((vocab.exception.status, vocab.exception.type), (400, "invalid_request"))
        self.assertIn("vocabulary", vocab.exception.message)
        with self.assertRaises(RollgateError) as misaligned:
            await self.client.complete(p.request_id, HELLO, logprobs=[-0.1])
        self.assertEqual(misaligned.exception.status, 400)
        with self.assertRaises(RollgateError) as reason:
            await self.client.complete(p.request_id, HELLO, finish_reason="tool_calls")
        self.assertEqual(reason.exception.status, 400)
        # The refused completions left the request pending: a valid one still lands.
        await self.client.complete(p.request_id, HELLO)
        with self.assertRaises(RollgateError) as again:
            await self.client.complete(p.request_id, HELLO)
        self.assertEqual((again.exception.status, again.exception.type), (409, "conflict"))
        self.assertEqual((await agent).content, "Hello")

    async def test_fail_reaches_the_agent(self) -> None:
        r = await self.new_rollout()
        agent = asyncio.ensure_future(asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "hi"}]))
        p = await self.take(r.id)
        self.assertTrue((await self.client.fail(p.request_id, "engine overloaded", status=503))["failed"])
        ans = await agent
        self.assertEqual(ans.status, 503)
        self.assertIn("engine overloaded", ans.body["error"]["message"])
        streaming = asyncio.ensure_future(
            asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "again"}], stream=True)
        )
        p2 = await self.take(r.id)
        await self.client.fail(p2.request_id, "out of memory")
        ans2 = await streaming
        failed = ans2.error or (ans2.body or {}).get("error")
        self.assertIsNotNone(failed, ans2)
        self.assertIn("out of memory", json.dumps(failed))
        with self.assertRaises(RollgateError) as e:
            await self.client.complete(p.request_id, HELLO)
        self.assertEqual(e.exception.status, 409)

    async def test_delete_fails_pending_agent_requests(self) -> None:
        r = await self.new_rollout()
        agent = asyncio.ensure_future(asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "hi"}]))
        p = await self.take(r.id)
        await self.client.delete_rollout(r.id)
        ans = await agent
        self.assertGreaterEqual(ans.status, 400)
        with self.assertRaises(RollgateError) as e:
            await self.client.complete(p.request_id, HELLO)
        self.assertEqual(e.exception.status, 410, "withdrawn with its rollout")


class AdminStatusTest(GatewayTestCase):
    """``/api/pause``, ``/api/resume``, ``/api/status`` (skipped on a gateway without them)."""

    async def test_pause_resume_status(self) -> None:
        try:
            st = await self.client.status()
        except RollgateError as e:
            if e.status == 404:
                raise support.skip("Python client pause/status", "this gateway has no /api/status yet")
            raise
        self.assertIsInstance(st, GatewayStatus)
        self.assertFalse(st.paused)
        # A turn handed out before the pause is in flight until the trainer answers it.
        r = await self.new_rollout()
        first = asyncio.ensure_future(asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "one"}]))
        p1 = await self.take(r.id)
        paused = await self.client.pause()
        try:
            self.assertIsInstance(paused, GatewayStatus)
            self.assertTrue(paused.paused)
            self.assertEqual(paused.in_flight, 1)
            self.assertGreaterEqual(paused.pending_requests, 1)
            with self.assertRaises(asyncio.TimeoutError):
                await self.client.drain(timeout=0.3)
            await self.client.complete(p1.request_id, HELLO)
            self.assertEqual((await first).content, "Hello")
            self.assertEqual((await self.client.drain(timeout=5)).in_flight, 0)

            other = await self.new_rollout()
            agent = asyncio.ensure_future(asyncio.to_thread(chat, other.base_url, [{"role": "user", "content": "hi"}]))
            # Held while paused: no pending request reaches the trainer.
            self.assertIsNone(await self.client.next_request(wait=0.5, rollout=other.id))
            self.assertEqual((await self.client.status()).held, 1)
        finally:
            resumed = await self.client.resume()
        self.assertFalse(resumed.paused)
        p = await self.take(other.id)
        await self.client.complete(p.request_id, HELLO)
        self.assertEqual((await agent).content, "Hello")
        self.assertEqual((await self.client.status()).held, 0)


class DispatchVersionTest(unittest.IsolatedAsyncioTestCase):
    """``ack(weight_version=)`` and ``resume(weight_version=)`` stamp a turn's first-id version,
    beside the version at completion (a gateway of its own: the version in force stays set)."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.gw = support.start_gateway()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.gw.stop()

    async def turn(self, client: RollgateClient, **ack) -> dict:
        r = await client.create_rollout(id=rid())
        agent = asyncio.ensure_future(asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "hi"}]))
        p = await client.next_request(wait=10, rollout=r.id)
        await client.ack(p.request_id, **ack)
        await client.complete(p.request_id, HELLO, weight_version=4)
        await agent
        [sample] = await client.finish_rollout(r.id, 1.0)
        return sample.turn_spans[0]

    async def test_versions_at_dispatch_and_completion(self) -> None:
        async with RollgateClient(self.gw.url, timeout=30) as client:
            span = await self.turn(client, weight_version=3)
            self.assertEqual((span["weight_version"], span["completion_version"]), (3, 4))
            self.assertEqual((await client.resume(weight_version=2)).weight_version, 2)
            span = await self.turn(client)
            self.assertEqual((span["weight_version"], span["completion_version"]), (2, 4))


class AdminTokenTest(unittest.IsolatedAsyncioTestCase):
    TOKEN = "adm-" + uuid.uuid4().hex

    @classmethod
    def setUpClass(cls) -> None:
        cls.gw = support.start_gateway(env={"ROLLGATE_ADMIN_TOKEN": cls.TOKEN})

    @classmethod
    def tearDownClass(cls) -> None:
        cls.gw.stop()

    async def test_admin_token_required(self) -> None:
        async with RollgateClient(self.gw.url) as anon, RollgateClient(self.gw.url, admin_token="wrong") as wrong:
            for c in (anon, wrong):
                with self.assertRaises(RollgateError) as e:
                    await c.list_rollouts()
                self.assertEqual((e.exception.status, e.exception.type), (401, "unauthorized"))
                with self.assertRaises(RollgateError) as n:
                    await c.next_request(wait=0)
                self.assertEqual(n.exception.status, 401)

    async def test_turn_with_admin_and_rollout_tokens(self) -> None:
        async with RollgateClient(self.gw.url, admin_token=self.TOKEN) as c:
            r = await c.create_rollout(id=rid("adm"))
            # Without its token the agent is refused; with it, the turn goes through.
            refused = await asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "hi"}])
            self.assertEqual(refused.status, 401)
            agent = asyncio.ensure_future(
                asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "hi"}], token=r.token)
            )
            p = await c.next_request(wait=15, rollout=r.id)
            assert p is not None
            await c.complete(p.request_id, HELLO, logprobs=logprobs_for(HELLO))
            self.assertEqual((await agent).content, "Hello")
            [s] = await c.finish_rollout(r.id, reward=1)
            self.assertEqual(sum(s.loss_mask), 2)


class IdTransportTest(GatewayTestCase):
    """The compact id transport (the client's default) against JSON on a real gateway."""

    async def test_base64_and_json_give_the_same_requests_and_samples(self) -> None:
        self.assertEqual(self.client.ids, "base64")
        plain = RollgateClient(self.gw.url, timeout=30, ids="json")
        try:
            rollouts = [await self.new_rollout(), await self.new_rollout()]
            agents = [
                asyncio.ensure_future(
                    asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "Say hello"}], token=r.token)
                )
                for r in rollouts
            ]
            compact = await self.take(rollouts[0].id)
            p = await plain.next_request(wait=15, rollout=rollouts[1].id)
            assert p is not None
            self.assertEqual(compact.prompt_ids, p.prompt_ids)
            self.assertGreater(len(p.prompt_ids), 5)
            self.assertEqual(compact.sampling, p.sampling)
            self.assertNotIn("ids_encoding", compact.extra)
            lp = logprobs_for(HELLO)
            for pending in (compact, p):
                await self.client.complete(pending.request_id, HELLO, logprobs=lp)
            for a in agents:
                self.assertEqual((await asyncio.wait_for(a, 30)).status, 200)

            r = rollouts[0].id
            finished = await self.client.finish_rollout(r, reward=1.0)
            as_json = await plain.samples(r)
            self.assertEqual([s.to_dict() for s in finished], [s.to_dict() for s in as_json])
            self.assertEqual([s.to_dict() for s in await self.client.samples(r)], [s.to_dict() for s in as_json])
            [s] = as_json
            self.assertEqual(s.input_ids, p.prompt_ids + HELLO)
            self.assertEqual([x for x, m in zip(s.logprobs, s.loss_mask) if m], lp)
            self.assertEqual(len(s.extra["sft_mask"]), len(s.input_ids))

            raw = await self.client._call("GET", f"/api/rollouts/{r}/samples", query={"ids": "base64"})
            self.assertIsInstance(raw["samples"][0]["input_ids"], str)
            self.assertEqual(raw["samples"][0]["ids_encoding"], "base64")
        finally:
            await plain.close()

    def test_unknown_encoding_is_refused(self) -> None:
        with self.assertRaises(ValueError):
            RollgateClient(self.gw.url, ids="hex")


class ParsingTest(unittest.TestCase):
    """Shapes only (no gateway)."""

    def test_sample_keeps_unknown_fields(self) -> None:
        s = Sample.from_json(
            {"input_ids": [1, 2, 3], "loss_mask": [0, 1, 1], "logprobs": [0, -0.1, -0.2], "reward": 1,
             "branch": "rewritten", "turns": ["a"], "finish_reason": "stop", "num_sampled": 2,
             "metadata": {"k": 1}, "rollout_id": "r", "index": 1, "sft_mask": [0, 0, 0]}
        )
        self.assertEqual(s.extra, {"sft_mask": [0, 0, 0]})
        self.assertEqual((s.branch, s.prompt_length, s.index), ("rewritten", 1, 1))
        self.assertEqual(s.to_dict()["sft_mask"], [0, 0, 0])

    def test_pending_and_status(self) -> None:
        p = PendingRequest.from_json(
            {"request_id": "req_1", "rollout_id": "r", "turn_id": "r.0", "prompt_ids": [1],
             "sampling": {"max_tokens": 5, "stop_token_ids": [7]}, "priority": 2}
        )
        self.assertEqual((p.max_tokens, p.temperature, p.stop_token_ids, p.extra), (5, None, [7], {"priority": 2}))
        st = GatewayStatus.from_json({"paused": True, "in_flight": 2, "held": 1, "pending_requests": 0, "x": 1})
        self.assertEqual((st.paused, st.in_flight, st.held, st.extra), (True, 2, 1, {"x": 1}))

    def test_base64_fields_decode_to_the_json_lists(self) -> None:
        s = Sample.from_json(
            {"input_ids": "AQAAAP////8AAAEA", "loss_mask": "AAEB", "sft_mask": "AAAA",
             "logprobs": "AAAAAAAAAAAAAAAAAADQvwAAAAAAAOC/", "ids_encoding": "base64"}
        )
        self.assertEqual((s.input_ids, s.loss_mask, s.logprobs), ([1, -1, 65536], [0, 1, 1], [0.0, -0.25, -0.5]))
        self.assertEqual(s.extra, {"sft_mask": [0, 0, 0]})

    def test_error_str(self) -> None:
        e = RollgateError(404, "not_found", "unknown request id x")
        self.assertEqual(str(e), "404 not_found: unknown request id x")


if __name__ == "__main__":
    unittest.main()
