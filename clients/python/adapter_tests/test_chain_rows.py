"""The mapping every adapter shares, on the four-chain rollout of a REAL gateway: one row per chain,
one call per LLM call, every sampled id trained exactly once with its own logprob, and a trained
position without a logprob refused unless the caller says recompute or context."""

from __future__ import annotations

import copy
import sys
import time
import unittest

import multi_chain
from multi_chain import support

from rollgate_client import RollgateClient
from rollgate_client.adapters import (
    AgentRollout,
    MissingLogprobsError,
    MissingTeacherError,
    chain_rows,
    cli_launcher,
    trained_calls,
)


def policy_pairs(policy: multi_chain.ScriptedPolicy) -> list[tuple[int, float]]:
    """Every (id, logprob) the policy sampled: what must be trained once, no more, no less."""
    out = []
    for turn, ids in enumerate(policy.outputs[: len(policy.prompts)]):
        out += [(t, multi_chain.turn_logprob(turn, k)) for k, t in enumerate(ids)]
    return sorted(out)


class ChainRowsTest(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        multi_chain.answer_ids(tuple(multi_chain.ANSWERS))  # the tokenizer loads outside the event loop

    async def asyncSetUp(self) -> None:
        self.gw = support.gateway()
        self.client = RollgateClient(self.gw.url, timeout=30)
        self.policy = multi_chain.ScriptedPolicy()
        self.run = await multi_chain.multi_chain_rollout(self.client, group="count-files", policy=self.policy)

    async def asyncTearDown(self) -> None:
        await self.client.close()

    async def test_one_row_per_chain_and_every_sampled_id_trained_once(self) -> None:
        rows = chain_rows(self.run.samples)
        self.assertEqual([r.sample.branch for r in rows], [s.branch for s in self.run.samples])
        pairs = []
        for row, sample in zip(rows, self.run.samples):
            self.assertEqual(row.input_ids, sample.input_ids)
            self.assertEqual(len(row.response_ids), len(row.response_mask))
            self.assertEqual(len(row.response_ids), len(row.response_logprobs))
            self.assertEqual(row.response_mask[0], 1)  # the response starts at the first trained id
            row_pairs = multi_chain.trained(row.response_ids, row.response_mask, row.response_logprobs)
            self.assertEqual(row_pairs, multi_chain.sample_trained(sample))
            self.assertEqual(row.weight_versions, [7] * len([s for s in sample.turn_spans if s["trained"]]))
            pairs += row_pairs
        self.assertEqual(sorted(pairs), policy_pairs(self.policy))
        fork = next(r for r in rows if r.sample.branch == "rewrite")
        # The fork's shared prefix (main's first turn) is context in its row: trained in main's.
        self.assertGreater(len(fork.prompt_ids), fork.sample.trained_from)

    async def test_calls_come_chain_after_chain_each_once(self) -> None:
        for ids in ("json", "base64"):
            async with RollgateClient(self.gw.url, ids=ids, timeout=30) as client:
                calls = trained_calls(await client.sample_calls(self.run.rollout.id))
            self.assertEqual(len(calls), len(self.policy.prompts))
            self.assertEqual(len({c.turn for c in calls}), len(calls))
            pairs = []
            for c in calls:
                self.assertIn(c.prompt_ids, self.policy.prompts)  # exactly the prompt the engine saw
                seq = c.prompt_ids + c.output_ids
                pairs += multi_chain.trained(seq, c.loss_mask, [0.0] * len(c.prompt_ids) + c.logprobs)
                self.assertFalse(any(c.loss_mask[: len(c.prompt_ids)]))
            self.assertEqual(sorted(pairs), policy_pairs(self.policy), ids)
            # Within a chain each call extends the one before, id for id.
            for a, b in zip(calls, calls[1:]):
                if a.chain == b.chain:
                    self.assertEqual(b.prompt_ids[: len(a.prompt_ids) + len(a.output_ids)], a.prompt_ids + a.output_ids)

    async def test_a_sample_without_logprobs_is_refused_unless_told(self) -> None:
        main = next(s for s in self.run.samples if s.branch == "main")
        lacking = copy.deepcopy(main)
        second = lacking.turn_spans[1]
        for i in range(second["output_start"], second["end"]):
            lacking.logprobs[i] = None  # what the gateway reports for a completion without logprobs
        with self.assertRaises(MissingLogprobsError) as caught:
            chain_rows([lacking])
        self.assertEqual(caught.exception.turns, [second["turn"]])
        self.assertIn(second["turn"], str(caught.exception))
        [recomputed] = chain_rows([lacking], missing_logprobs="recompute")
        self.assertIsNone(recomputed.response_logprobs)
        self.assertEqual(recomputed.response_mask, chain_rows([main])[0].response_mask)
        [context] = chain_rows([lacking], missing_logprobs="context")
        self.assertEqual(context.metadata["logprobs_absent_turns"], [second["turn"]])
        self.assertEqual(sum(context.response_mask), sum(main.loss_mask) - (second["end"] - second["output_start"]))
        with self.assertRaises(ValueError):
            chain_rows([main], missing_logprobs="guess")

    async def test_a_call_without_logprobs_is_refused_or_kept_as_context(self) -> None:
        async with RollgateClient(self.gw.url, ids="json", timeout=30) as client:
            export = await client.sample_calls(self.run.rollout.id)
        call = export["calls"][0]
        call["logprobs"] = [None] * len(call["logprobs"])
        with self.assertRaises(MissingLogprobsError) as caught:
            trained_calls(export)
        self.assertEqual(caught.exception.turns, [str(call["turn"])])
        context = {c.turn: c for c in trained_calls(export, missing_logprobs="context")}[str(call["turn"])]
        self.assertFalse(any(context.loss_mask))
        self.assertEqual(context.metadata["logprobs_absent_turns"], [str(call["turn"])])
        with self.assertRaises(ValueError):
            trained_calls(export, missing_logprobs="recompute")  # a call's trainer cannot recompute

    async def test_a_completion_without_logprobs_end_to_end(self) -> None:
        policy = multi_chain.ScriptedPolicy()
        policy.with_logprobs = False
        run = await multi_chain.multi_chain_rollout(self.client, policy=policy)
        # The gateway marks what the producer did not report: None at the sampled ids, the turns named.
        self.assertTrue(any(s.logprobs_absent for s in run.samples))
        self.assertTrue(
            any(m and lp is None for s in run.samples for m, lp in zip(s.loss_mask, s.logprobs))
        )
        self.assertFalse(any(s.fit_for_importance_ratio for s in run.samples if s.logprobs_absent))
        with self.assertRaises(MissingLogprobsError):
            chain_rows(run.samples)
        with self.assertRaises(MissingLogprobsError):
            trained_calls(await run.calls())


class ThirdRoundFieldsTest(unittest.IsolatedAsyncioTestCase):
    """Teacher logprobs, rewards per turn and kept sets ride along in rows and calls, on the
    four-chain rollout of a gateway whose teacher is the trainer (a scorer double)."""

    @classmethod
    def setUpClass(cls) -> None:
        multi_chain.answer_ids(tuple(multi_chain.ANSWERS))

    async def asyncSetUp(self) -> None:
        self.client = RollgateClient(multi_chain.teaching_gateway().url, timeout=60)
        run = await AgentRollout.start(
            self.client, multi_chain.launch_agent, generate=multi_chain.ScriptedPolicy(kept=True).handler
        )
        self.samples = await run.complete(60, multi_chain.step_rewards)
        self.run = run

    async def asyncTearDown(self) -> None:
        await self.client.close()

    async def test_rows_carry_teacher_logprobs_rewards_and_kept_sets(self) -> None:
        rows = chain_rows(self.samples)
        self.assertEqual(len(rows), len(multi_chain.BRANCHES))
        for row in rows:
            mask = [0] * len(row.prompt_ids) + row.response_mask
            multi_chain.check_teacher(self, row.input_ids, mask, row.teacher_logprobs)
            trained = [s for s in row.sample.turn_spans if s["trained"]]
            index = {t: k for k, t in enumerate(self.run_turns)}
            self.assertEqual(row.turn_rewards, [multi_chain.turn_reward(index[s["turn"]]) for s in trained])
            for i, (m, kept) in enumerate(zip(row.response_mask, row.kept_sets)):
                p = len(row.prompt_ids) + i
                span = next((s for s in row.sample.turn_spans if s["output_start"] <= p < s["end"]), None)
                if span is None:
                    self.assertEqual(kept, [], f"position {p}: nothing sampled, no kept set")
                else:
                    self.assertEqual(kept, multi_chain.kept_set(p - span["output_start"], row.input_ids[p]))

    async def test_calls_carry_them_too(self) -> None:
        for ids in ("json", "base64"):
            async with RollgateClient(self.client.base_url, ids=ids, timeout=30) as client:
                calls = trained_calls(await client.sample_calls(self.run.rollout.id))
            index = {t: k for k, t in enumerate(self.run_turns)}
            for c in calls:
                multi_chain.check_teacher(
                    self, c.prompt_ids + c.output_ids, c.loss_mask, [None] * len(c.prompt_ids) + c.teacher_logprobs
                )
                self.assertEqual(c.reward, multi_chain.turn_reward(index[c.turn]))
                self.assertEqual(c.kept_sets, [multi_chain.kept_set(k, t) for k, t in enumerate(c.output_ids)])

    async def test_a_turn_without_teacher_scores_is_refused_unless_told(self) -> None:
        main = next(s for s in self.samples if s.branch == "main")
        lacking = copy.deepcopy(main)
        second = lacking.turn_spans[1]
        lacking.teacher_missing = [
            {"turn": second["turn"], "start": second["output_start"], "end": second["end"], "reason": "down"}
        ]
        for i in range(second["output_start"], second["end"]):
            lacking.teacher_logprobs[i] = None
        with self.assertRaises(MissingTeacherError) as caught:
            chain_rows([lacking])
        self.assertEqual(caught.exception.turns, [second["turn"]])
        [context] = chain_rows([lacking], missing_teacher="context")
        self.assertEqual(context.metadata["teacher_missing_turns"], [second["turn"]])
        self.assertEqual(sum(context.response_mask), sum(main.loss_mask) - (second["end"] - second["output_start"]))
        multi_chain.check_teacher(
            self, context.input_ids, [0] * len(context.prompt_ids) + context.response_mask, context.teacher_logprobs
        )

    @property
    def run_turns(self) -> list[str]:
        """The rollout's turn ids in arrival order (what ``reward_turn`` indexes)."""
        seen: dict[str, int] = {}
        for s in self.samples:
            for t in s.turns:
                seen.setdefault(t, int(t.split(".")[-2]))
        return sorted(seen, key=seen.get)


class CliLauncherTest(unittest.IsolatedAsyncioTestCase):
    """``cli_launcher``: the agent as a process with the rollout in its environment, stopped when
    the run ends before it does."""

    @classmethod
    def setUpClass(cls) -> None:
        multi_chain.answer_ids(tuple(multi_chain.ANSWERS))

    async def asyncSetUp(self) -> None:
        self.client = RollgateClient(support.gateway().url, timeout=30)

    async def asyncTearDown(self) -> None:
        await self.client.close()

    async def test_the_cli_runs_against_the_rollout(self) -> None:
        launch = cli_launcher([sys.executable, str(multi_chain.HERE / "multi_chain.py")])
        run = await AgentRollout.start(self.client, launch, generate=multi_chain.ScriptedPolicy().handler)
        self.assertEqual(await run.wait(60), 0)
        samples = await run.finish(1.0)
        self.assertEqual(sorted(s.branch for s in samples), sorted(multi_chain.BRANCHES))

    async def test_a_cli_past_its_time_is_stopped_and_its_rollout_finished(self) -> None:
        launch = cli_launcher([sys.executable, "-c", "import time; time.sleep(120)"], kill_after=2)
        run = await AgentRollout.start(self.client, launch)
        t0 = time.monotonic()
        samples = await run.complete(timeout=0.5)
        self.assertLess(time.monotonic() - t0, 30)
        self.assertTrue(run.timed_out)
        self.assertEqual(samples, [])  # no turn was asked for
        self.assertTrue(run._agent.done())


if __name__ == "__main__":
    unittest.main()
