"""The OpenEnv adapter against the real ``openenv`` 0.10.0 and ``trl`` 1.16.0 (``.venv-trainers``)
and a REAL gateway: the session is an OpenEnv ``TrainableSession`` whose ``TrainingTrace``
validates, and TRL's ``HarnessRolloutWorker`` loop (``_HarnessRolloutLoop``, its own code from
session creation to the scored ``RolloutSample``s, on CPU; no vLLM is asked, since the sessions
resolve their own turns) turns two four-chain rollouts into one row per chain, each equal to the
gateway's sample, with one advantage per rollout."""

from __future__ import annotations

import asyncio
import functools
import multiprocessing
import os
import queue
import threading
import time
import unittest

import multi_chain
from multi_chain import support

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
try:
    from openenv.core.harness import TrainableSession, TrainingTrace
    from trl.experimental.async_grpo import openenv_harness

    from rollgate_client.adapters.openenv import RollgateSessionFactory
except ImportError as e:  # pragma: no cover - outside .venv-trainers
    raise support.skip(
        "adapters: OpenEnv + TRL", f"openenv/trl not importable ({e}): run sh tests/engine/install_trainers.sh"
    )


class OpenEnvSessionTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.gw = support.gateway()

    def test_the_session_gives_a_validated_training_trace(self) -> None:
        policy = multi_chain.ScriptedPolicy()
        factory = RollgateSessionFactory(
            self.gw.url, multi_chain.launch_agent, generate=policy.handler, reward_fn=lambda task, run: 1.0
        )
        try:
            session = factory.create("count the files", seed=3, episode_id="openenv-direct")
            self.assertIsInstance(session, TrainableSession)
            self.assertEqual(session.wait_for_completion(60), 0)
            trace = session.fetch_training_trace()
            verify = session.verify([])
            session.close()
        finally:
            factory.close()
        self.assertEqual(TrainingTrace.model_validate(trace.model_dump()), trace)  # strict: it validates
        self.assertEqual(len(trace.turns), len(policy.prompts))
        # Every call once, exactly as the engine saw it; a chain's calls together, chain after chain.
        self.assertEqual(sorted(tuple(t.prompt_token_ids) for t in trace.turns), sorted(map(tuple, policy.prompts)))
        chains = [t.metadata["chain"] for t in trace.turns]
        self.assertEqual([c for i, c in enumerate(chains) if i == 0 or chains[i - 1] != c], list(dict.fromkeys(chains)))
        pairs = sorted(
            pair
            for t in trace.turns
            for pair in multi_chain.trained(
                t.prompt_token_ids + t.completion_token_ids,
                t.loss_mask,
                [0.0] * len(t.prompt_token_ids) + t.per_token_logps,
            )
        )
        want = sorted(
            (i, multi_chain.turn_logprob(turn, k))
            for turn, out in enumerate(policy.outputs)
            for k, i in enumerate(out)
        )
        self.assertEqual(pairs, want)
        self.assertEqual(verify.env_reward, 1.0)
        self.assertEqual(verify.artifacts["chains"], sorted(multi_chain.BRANCHES))
        self.assertEqual(trace.turns[0].metadata["rollout_id"], "openenv-direct")
        # The transcript rides along for TRL's reward functions and tool counts.
        first = next(t for t in trace.turns if t.response["choices"][0]["message"].get("tool_calls"))
        self.assertEqual(first.response["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "Task")


    def test_teacher_logprobs_turn_rewards_and_kept_sets_in_the_turns_metadata(self) -> None:
        policy = multi_chain.ScriptedPolicy(kept=True)
        factory = RollgateSessionFactory(
            multi_chain.teaching_gateway().url, multi_chain.launch_agent, generate=policy.handler,
            reward_fn=multi_chain.step_rewards,
        )
        try:
            session = factory.create("count the files", seed=4, episode_id="openenv-extras")
            self.assertEqual(session.wait_for_completion(60), 0)
            trace = session.fetch_training_trace()
            session.close()
        finally:
            factory.close()
        self.assertEqual(TrainingTrace.model_validate(trace.model_dump()), trace)
        for t in trace.turns:
            seq = t.prompt_token_ids + t.completion_token_ids
            teacher = [None] * len(t.prompt_token_ids) + t.metadata["teacher_logprobs"]
            multi_chain.check_teacher(self, seq, t.loss_mask, teacher)
            self.assertIsInstance(t.metadata["turn_reward"], float)
            self.assertEqual(
                t.metadata["sampling_mask"], [multi_chain.kept_set(k, i) for k, i in enumerate(t.completion_token_ids)]
            )


class HarnessRolloutWorkerTest(unittest.TestCase):
    """TRL's own loop consumes the trace as it is."""

    def test_trl_makes_one_row_per_chain_and_one_advantage_per_rollout(self) -> None:
        from accelerate.state import PartialState
        from datasets import Dataset
        from transformers import AutoTokenizer

        PartialState()  # as TRL's rollout child process does before its loop logs

        gw = support.gateway()
        policies = multi_chain.ScriptedPolicies()
        started: list[str] = []
        factories: list[RollgateSessionFactory] = []
        sessions = []

        async def launch(rollout, task):
            started.append(rollout.id)
            if len(started) > 2:  # TRL's loop goes on to the next group: hold it until stopped
                await asyncio.Event().wait()
            return await multi_chain.launch_agent(rollout, task)

        def reward(task, run):
            return 1.0 if run.rollout.id == started[0] else 0.0

        class Factory(RollgateSessionFactory):
            def __init__(self, **kw):
                super().__init__(gw.url, launch, generate=policies.handler, reward_fn=reward, **kw)
                factories.append(self)

            def create(self, *a, **kw):
                sessions.append(super().create(*a, **kw))
                return sessions[-1]

        from trl.chat_template_utils import qwen3_schema

        tokenizer = AutoTokenizer.from_pretrained(str(multi_chain.TOKENIZER.parent))
        # The bundled template is not byte-equal to one TRL knows; the loop-owning path parses no
        # reply (the gateway did), so Qwen3's schema only satisfies TRL's constructor.
        tokenizer.response_schema = qwen3_schema
        buffer: queue.Queue = queue.Queue()
        loop = openenv_harness._HarnessRolloutLoop(
            harness_session_factory=functools.partial(Factory),
            model_name="policy",
            dataset=Dataset.from_list([{"prompt": [{"role": "user", "content": "How many files are in /tmp?"}]}]),
            reward_funcs=[],
            processing_class=tokenizer,
            eos_token_ids=[multi_chain.IM_END],
            rollout_buffer=buffer,
            model_version_value=multiprocessing.Value("i", 0),
            heartbeat_value=multiprocessing.Value("d", 0.0),
            failed_event=threading.Event(),
            exception_info_queue=queue.Queue(),
            metrics_queue=queue.Queue(),
            num_generations=2,
            max_inflight_tasks=2,
            temperature=1.0,
        )
        worker = threading.Thread(target=loop.run, daemon=True)
        worker.start()
        rows = []
        deadline = time.monotonic() + 120
        while len(rows) < 2 * len(multi_chain.BRANCHES) and time.monotonic() < deadline and worker.is_alive():
            try:
                rows.append(buffer.get(timeout=0.5))
            except queue.Empty:
                pass
        if worker.is_alive():
            loop._loop.call_soon_threadsafe(loop._stop_event.set)
        worker.join(60)
        for f in factories:
            f.close()
        self.assertFalse(worker.is_alive())
        self.assertEqual(len(rows), 2 * len(multi_chain.BRANCHES))
        by_rollout = {s.rollout_id: s for s in sessions}
        for rollout_id, advantage in ((started[0], 1.0), (started[1], -1.0)):
            samples = by_rollout[rollout_id].run.samples
            mine = [r for r in rows if abs(r.advantage - advantage) < 1e-6]
            self.assertEqual(len(mine), len(samples))  # one row per chain, the rollout's advantage on each
            for sample in samples:
                [row] = [r for r in mine if r.input_ids.tolist() == sample.input_ids]
                self.assertEqual(row.completion_mask.tolist(), sample.loss_mask)
                for i, m in enumerate(sample.loss_mask):
                    if m:
                        self.assertAlmostEqual(float(row.old_log_probs[i]), sample.logprobs[i], places=6)


if __name__ == "__main__":
    unittest.main()
