"""The tree and calls sample forms and routing rows against a REAL gateway: a rollout of two turns
(a tool call, then an answer) whose completions carry MoE routing and weight versions; the
client's ``expand_tree`` / ``expand_calls`` give back the flat samples exactly, in both id
transports, and ``group_advantages`` baselines over rollouts, not samples."""

from __future__ import annotations

import asyncio
import base64
import unittest

try:
    from . import support
    from .test_client import GatewayTestCase
except ImportError:  # run from inside tests/
    import support  # type: ignore[no-redef]
    from test_client import GatewayTestCase  # type: ignore[no-redef]

from rollgate_client import (
    RollgateClient,
    RollgateError,
    expand_calls,
    expand_tree,
    routed_experts_rows,
    sample_advantages,
)

LAYERS, TOP_K = 2, 3


def expert(p: int, token: int, layer: int, k: int) -> int:
    """The TEST DOUBLE's routing: a function of position and token, so misalignment shows."""
    return (token * 31 + p * 7 + layer * 3 + k) % 251


def rows_for(prompt: list[int], output: list[int], start: int) -> dict:
    seq = prompt + output
    data = bytes(
        expert(p, seq[p], l, k) for p in range(start, len(seq) - 1) for l in range(LAYERS) for k in range(TOP_K)
    )
    return {"dtype": "uint8", "shape": [len(seq) - 1 - start, LAYERS, TOP_K], "data": base64.b64encode(data).decode()}


def kept_for(output: list[int]) -> list[list[int]]:
    """A sampler's kept sets (TEST DOUBLE): each holds the sampled id and a position-dependent one."""
    return [[t, (t + 1 + i) % 1000] for i, t in enumerate(output)]


class SampleFormsTest(GatewayTestCase):
    async def two_turns(self, group: str, reward: float, second_logprobs: bool = True, kept: bool = False) -> str:
        r = await self.new_rollout(group=group, sampling={"temperature": 0.6})
        messages = [{"role": "user", "content": "Weather in Paris?"}]
        first = asyncio.ensure_future(
            asyncio.to_thread(support.chat, r.base_url, messages, tools=[support.WEATHER_TOOL], token=r.token)
        )
        p1 = await self.take(r.id)
        self.assertEqual(p1.routed_experts_from, 0)
        out1 = support.TOOL_CALL_WEATHER
        await self.client.complete(
            p1.request_id,
            out1,
            logprobs=support.logprobs_for(out1),
            weight_version=1,
            logprobs_mode="raw",
            routed_experts=rows_for(p1.prompt_ids, out1, 0),
            sampling_mask=kept_for(out1) if kept else None,
        )
        ans = await first
        call = ans.tool_calls[0]
        messages += [
            {"role": "assistant", "content": ans.content or None, "tool_calls": [
                {"id": call["id"], "type": "function", "function": call["function"]}
            ]},
            {"role": "tool", "tool_call_id": call["id"], "content": "sunny"},
        ]
        second = asyncio.ensure_future(
            asyncio.to_thread(support.chat, r.base_url, messages, tools=[support.WEATHER_TOOL], token=r.token)
        )
        p2 = await self.take(r.id)
        self.assertEqual(p2.routed_experts_from, len(p1.prompt_ids) + len(out1) - 1)
        out2 = support.HELLO
        await self.client.append(p2.request_id, out2[:1], weight_version=1)
        await self.client.complete(
            p2.request_id,
            out2,
            logprobs=support.logprobs_for(out2) if second_logprobs else None,
            weight_version=2,
            routed_experts=rows_for(p2.prompt_ids, out2, p2.routed_experts_from),
            sampling_mask=kept_for(out2) if kept else None,
        )
        await second
        await self.client.finish_rollout(r.id, reward)
        return r.id

    async def test_tree_and_calls_expand_to_the_flat_samples(self) -> None:
        rollout = await self.two_turns("paris", 1.0)
        for ids in ("json", "base64"):
            async with RollgateClient(self.gw.url, ids=ids, timeout=30) as client:
                flat = [s.to_dict() for s in await client.samples(rollout)]
                tree = await client.sample_tree(rollout)
                calls = await client.sample_calls(rollout)
            keys = ("input_ids", "loss_mask", "logprobs", "sft_mask", "routed_experts")
            want = [{k: s[k] for k in keys} for s in flat]
            self.assertEqual([{k: s[k] for k in keys} for s in expand_tree(tree)], want, ids)
            self.assertEqual([{k: s[k] for k in keys} for s in expand_calls(calls)], want, ids)
        [sample] = flat
        self.assertEqual(sample["group"], "paris")
        self.assertEqual(sample["version_span"], [1, 2])
        rows = routed_experts_rows(sample["routed_experts"])
        self.assertEqual(len(rows), len(sample["input_ids"]) - 1)
        for p, row in enumerate(rows):
            token = sample["input_ids"][p]
            self.assertEqual(row, [[expert(p, token, l, k) for k in range(TOP_K)] for l in range(LAYERS)])
        first, second = sample["turn_spans"]
        self.assertEqual(first["sampling"]["temperature"], 0.6)
        self.assertEqual(first["sampling"]["logprobs_mode"], "raw")
        self.assertEqual(second["weight_versions"], [[second["output_start"], 1], [second["output_start"] + 1, 2]])

    async def test_absent_logprobs_are_none_in_every_form(self) -> None:
        rollout = await self.two_turns("absent", 1.0, second_logprobs=False)
        for ids in ("json", "base64"):
            async with RollgateClient(self.gw.url, ids=ids, timeout=30) as client:
                [sample] = await client.samples(rollout)
                tree = await client.sample_tree(rollout)
                calls = await client.sample_calls(rollout)
            first, second = sample.turn_spans
            self.assertEqual(sample.logprobs_absent, [second["turn"]], ids)
            self.assertTrue(second["logprobs_absent"])
            own = sample.logprobs[second["output_start"] : second["end"]]
            self.assertTrue(own and all(lp is None for lp in own), f"{ids}: None, never 0: {own}")
            kept = sample.logprobs[first["output_start"] : first["end"]]
            self.assertTrue(all(isinstance(lp, float) and lp < 0 for lp in kept), ids)
            self.assertFalse(sample.fit_for_importance_ratio)
            want = {"input_ids": sample.input_ids, "logprobs": sample.logprobs}
            for expanded in (expand_tree(tree), expand_calls(calls)):
                self.assertEqual([{k: s[k] for k in want} for s in expanded], [want], ids)
        [whole] = await self.client.samples(await self.two_turns("whole", 1.0))
        self.assertTrue(whole.fit_for_importance_ratio)
        self.assertEqual(whole.logprobs_absent, [])

    async def test_turn_rewards_in_every_form(self) -> None:
        rollout = await self.two_turns("stepwise", 1.0)
        [plain] = await self.client.samples(rollout)
        self.assertIsNone(plain.turn_rewards)
        posted = await self.client.reward_turn(rollout, 0, 0.5)
        self.assertTrue(posted["recorded"])
        self.assertFalse((await self.client.reward_turn(rollout, posted["turn"], 0.5))["recorded"])
        with self.assertRaises(RollgateError) as conflict:
            await self.client.reward_turn(rollout, 0, 0.75)
        self.assertEqual(conflict.exception.status, 409)
        for ids in ("json", "base64"):
            async with RollgateClient(self.gw.url, ids=ids, timeout=30) as client:
                [sample] = await client.samples(rollout)
                tree = await client.sample_tree(rollout)
                calls = await client.sample_calls(rollout)
            first, second = sample.turn_spans
            self.assertEqual(sample.turn_rewards, [0.5, None], ids)
            want = [0.0] * len(sample.input_ids)
            want[first["end"] - 1], want[second["end"] - 1] = 0.5, None
            self.assertEqual(sample.position_rewards, want, ids)
            for expanded in (expand_tree(tree), expand_calls(calls)):
                self.assertEqual([s["position_rewards"] for s in expanded], [want], ids)

    async def test_kept_sets_in_every_form(self) -> None:
        rollout = await self.two_turns("kept", 1.0, kept=True)
        for ids in ("json", "base64"):
            async with RollgateClient(self.gw.url, ids=ids, timeout=30) as client:
                [sample] = await client.samples(rollout)
                tree = await client.sample_tree(rollout)
                calls = await client.sample_calls(rollout)
            want: list[list[int]] = [[] for _ in sample.input_ids]
            for span in sample.turn_spans:
                output = sample.input_ids[span["output_start"] : span["end"]]
                want[span["output_start"] : span["end"]] = kept_for(output)
            self.assertEqual(sample.kept_sets, want, ids)
            self.assertEqual(sample.sampling_mask_absent, [], ids)
            for expanded in (expand_tree(tree), expand_calls(calls)):
                self.assertEqual([s["sampling_mask"] for s in expanded], [sample.sampling_mask], ids)

    async def test_advantages_are_per_rollout(self) -> None:
        a = await self.two_turns("g-adv", 1.0)
        b = await self.two_turns("g-adv", 0.0)
        samples = [*(await self.client.samples(a)), *(await self.client.samples(b))]
        # Counted once per rollout however many samples it has: a's extra chain would move the
        # baseline if advantages were taken over samples.
        samples.append(samples[0])
        advantages = sample_advantages(samples, normalize_std=False)
        self.assertEqual(advantages, [0.5, -0.5, 0.5])


if __name__ == "__main__":
    unittest.main()
