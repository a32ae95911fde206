"""The examples against a REAL gateway: the vLLM gate worker with a fake vLLM (test double), and
the GRPO loop with its demo policy and with the vLLM backend."""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import unittest
import uuid

try:
    from . import support
    from .fake_vllm import FakeVLLM
except ImportError:  # run from inside tests/
    import support  # type: ignore[no-redef]
    from fake_vllm import FakeVLLM  # type: ignore[no-redef]

from rollgate_client import RollgateClient

HELLO, IM_END = support.HELLO, support.IM_END
chat = support.chat
worker = support.load_example("vllm_gate_worker")
grpo = support.load_example("grpo_loop")


def run_example(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(support.EXAMPLES / args[0]), *args[1:]],
        capture_output=True, text=True, timeout=timeout, cwd=str(support.EXAMPLES),
    )


class HelpTest(unittest.TestCase):
    def test_help(self) -> None:
        for name, flags in (("vllm_gate_worker.py", ["--gateway", "--vllm", "--model", "--concurrency"]),
                            ("grpo_loop.py", ["--gateway", "--group-size", "--vllm"]),
                            ("grpo_trl.py", ["--steps", "--generations", "--plot"]),
                            ("sft_samples.py", ["--vary", "--window", "--floor"])):
            out = run_example(name, "--help")
            self.assertEqual(out.returncode, 0, out.stderr)
            for flag in flags:
                self.assertIn(flag, out.stdout)


class ParseCompletionTest(unittest.TestCase):
    def test_shapes(self) -> None:
        new = {"choices": [{"token_ids": [9707, IM_END], "logprobs": {"token_logprobs": [-0.5, -0.1]}, "finish_reason": "stop"}]}
        c = worker.parse_completion(new, "w1")
        self.assertEqual((c.output_ids, c.logprobs, c.finish_reason, c.weight_version), ([9707, IM_END], [-0.5, -0.1], "stop", "w1"))
        old = {"choices": [{"logprobs": {"tokens": ["token_id:9707"], "token_logprobs": [-0.5]}, "finish_reason": "length"}]}
        c = worker.parse_completion(old)
        self.assertEqual((c.output_ids, c.finish_reason), ([9707], "length"))
        misaligned = {"choices": [{"token_ids": [1, 2], "logprobs": {"token_logprobs": [None, -1.0]}, "finish_reason": "stop"}]}
        with self.assertLogs("vllm_gate_worker", "WARNING"):
            self.assertIsNone(worker.parse_completion(misaligned).logprobs)
        with self.assertRaises(worker.EngineError):
            worker.parse_completion({"choices": [{"logprobs": {"tokens": ["Hello"]}}]})
        with self.assertRaises(worker.EngineError):
            worker.parse_completion({"object": "error"})

    def test_group_advantages(self) -> None:
        adv = grpo.group_advantages([1.0, 0.0, 0.0, 1.0])
        for a, want in zip(adv, [1, -1, -1, 1]):
            self.assertAlmostEqual(a, want, places=4)
        self.assertEqual(grpo.group_advantages([0.5, 0.5, 0.5]), [0.0, 0.0, 0.0])
        self.assertEqual(grpo.group_advantages([1.0]), [0.0])


class GatewayCase(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.gw = support.gateway()

    async def asyncSetUp(self) -> None:
        self.client = RollgateClient(self.gw.url, timeout=30)

    async def asyncTearDown(self) -> None:
        await self.client.close()


class VLLMWorkerTest(GatewayCase):
    async def serve(self, fake: FakeVLLM, rollout_id: str, **backend_kw):
        stop = asyncio.Event()
        backend = worker.VLLMBackend(fake.url + "/v1", "fake-model", **backend_kw)
        task = asyncio.ensure_future(
            worker.run_worker(self.gw.url, backend, concurrency=2, rollout=rollout_id, stop_event=stop, poll_wait=0.5)
        )
        return stop, task

    async def test_worker_resolves_turns_with_vllm(self) -> None:
        lps = [-0.25, -0.015625]
        r = await self.client.create_rollout(id=f"vllm-{uuid.uuid4().hex[:8]}", sampling={"max_tokens": 128, "temperature": 0.7})
        with FakeVLLM(HELLO, lps) as fake:
            stop, task = await self.serve(fake, r.id, weight_version="step-3")
            a1 = await asyncio.wait_for(asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "hi"}], token=r.token), 30)
            a2 = await asyncio.wait_for(asyncio.to_thread(
                chat, r.base_url,
                [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "again"}],
                stream=True, token=r.token,
            ), 30)
            stop.set()
            stats = await asyncio.wait_for(task, 5)
        self.assertEqual((a1.content, a2.content), ("Hello", "Hello"))
        self.assertEqual(stats.completed, 2)
        self.assertEqual(len(fake.requests), 2)
        body = fake.requests[0]
        self.assertEqual(body["model"], "fake-model")
        self.assertEqual((body["max_tokens"], body["temperature"], body["top_p"]), (128, 0.7, 1.0))
        self.assertIn(IM_END, body["stop_token_ids"])
        self.assertEqual((body["logprobs"], body["return_token_ids"], body["return_tokens_as_token_ids"]), (1, True, True))
        self.assertEqual(body["user"], r.id)

        [s] = await self.client.finish_rollout(r.id, reward=1)
        # Turn 2's prompt (what vLLM got) extends turn 1's prompt + sampled ids, token for token.
        self.assertEqual(fake.requests[1]["prompt"][: len(body["prompt"]) + 2], body["prompt"] + HELLO)
        self.assertEqual(s.input_ids, fake.requests[1]["prompt"] + HELLO)
        self.assertEqual(sum(s.loss_mask), 4)
        self.assertEqual([p for p, m in zip(s.logprobs, s.loss_mask) if m], lps + lps)
        turns = (await self.client.get_rollout(r.id))["turn_list"]
        self.assertEqual([t["weight_version"] for t in turns], ["step-3", "step-3"])
        await self.client.delete_rollout(r.id)

    async def test_old_vllm_without_token_ids_and_length(self) -> None:
        r = await self.client.create_rollout(id=f"vllm-old-{uuid.uuid4().hex[:8]}", sampling={"max_tokens": 1})
        with FakeVLLM(HELLO, mode="old") as fake:
            stop, task = await self.serve(fake, r.id)
            ans = await asyncio.wait_for(asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "hi"}]), 30)
            stop.set()
            await asyncio.wait_for(task, 5)
        self.assertEqual((ans.content, ans.finish_reason), ("Hello", "length"))
        [s] = await self.client.finish_rollout(r.id)
        self.assertEqual(sum(s.loss_mask), 1)
        await self.client.delete_rollout(r.id)

    async def test_vllm_error_reaches_the_agent(self) -> None:
        r = await self.client.create_rollout(id=f"vllm-err-{uuid.uuid4().hex[:8]}")
        with FakeVLLM(HELLO, mode="error") as fake:
            stop, task = await self.serve(fake, r.id)
            with self.assertLogs("rollgate_client", "WARNING"):
                ans = await asyncio.wait_for(asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "hi"}]), 30)
                stop.set()
                stats = await asyncio.wait_for(task, 5)
        self.assertEqual(ans.status, 503)
        self.assertIn("CUDA out of memory", ans.body["error"]["message"])
        self.assertEqual(stats.failed, 1)
        await self.client.delete_rollout(r.id)

    async def test_command_line_worker(self) -> None:
        r = await self.client.create_rollout(id=f"vllm-cli-{uuid.uuid4().hex[:8]}")
        with FakeVLLM(HELLO) as fake:
            proc = subprocess.Popen(
                [sys.executable, str(support.EXAMPLES / "vllm_gate_worker.py"), "--gateway", self.gw.url,
                 "--vllm", fake.url, "--model", "fake-model", "--concurrency", "2", "--poll-wait", "0.5"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                env={**os.environ, "ROLLGATE_ADMIN_TOKEN": ""},
            )
            try:
                ans = await asyncio.wait_for(asyncio.to_thread(chat, r.base_url, [{"role": "user", "content": "hi"}]), 30)
                self.assertEqual(ans.content, "Hello")
            finally:
                proc.send_signal(signal.SIGINT)
                out, _ = await asyncio.to_thread(proc.communicate, timeout=10)
        self.assertEqual(proc.returncode, 0, out)
        self.assertIn(f"vLLM at {fake.url} serves fake-model", out)
        self.assertIn("completed=1", out)
        self.assertNotIn("HTTP Request", out)  # httpx's line per request is off by default
        await self.client.delete_rollout(r.id)

    async def test_command_line_worker_probes_its_engine(self) -> None:
        closed = support.free_port()
        with FakeVLLM(HELLO, model="other-model") as fake:
            for url, message in ((f"http://127.0.0.1:{closed}", "no vLLM answers at"),
                                 (fake.url, "serves ['other-model'], not --model fake-model")):
                out = await asyncio.to_thread(
                    run_example, "vllm_gate_worker.py", "--gateway", self.gw.url, "--vllm", url, "--model", "fake-model",
                )
                self.assertEqual(out.returncode, 1, out.stdout + out.stderr)
                self.assertIn(message, out.stderr)
                self.assertNotIn("serving", out.stderr)
            self.assertEqual(fake.requests, [])  # nothing was generated


class GRPOLoopTest(GatewayCase):
    async def test_demo_policy_loop(self) -> None:
        tasks = [{"id": f"greet-{uuid.uuid4().hex[:6]}", "prompt": "Greet me.", "answer": "Hello"},
                 {"id": f"hi-{uuid.uuid4().hex[:6]}", "prompt": "Say hi.", "answer": "Hi"}]
        batches = await asyncio.wait_for(
            grpo.train(self.client, tasks, group_size=4, steps=2, generate=grpo.demo_policy(seed=1),
                       concurrency=4, poll_wait=0.5, sync_weights=True),
            60,
        )
        self.assertEqual(len(batches), 2)
        for batch in batches:
            self.assertEqual({len(v) for v in batch.values()}, {8})
            for ids, mask, lps, plen in zip(batch["input_ids"], batch["loss_mask"], batch["logprobs"], batch["prompt_lengths"]):
                self.assertEqual(len(ids), len(mask))
                self.assertEqual(len(ids), len(lps))
                self.assertEqual(sum(mask), 2)
                self.assertEqual(plen, len(ids) - 2)
            # The reward follows what the policy said; advantages are normalized per group.
            for ids, task_group, reward in zip(batch["input_ids"], batch["groups"], batch["rewards"]):
                said = "Hello" if ids[-2] == 9707 else "Hi"
                want = "Hello" if task_group.startswith("greet") else "Hi"
                self.assertEqual(reward, 1.0 if said == want else 0.0)
            for g in set(batch["groups"]):
                advs = [a for a, gg in zip(batch["advantages"], batch["groups"]) if gg == g]
                rewards = [r for r, gg in zip(batch["rewards"], batch["groups"]) if gg == g]
                self.assertAlmostEqual(sum(advs), 0.0, places=6)
                if len(set(rewards)) > 1:
                    self.assertAlmostEqual(math.sqrt(sum(a * a for a in advs) / len(advs)), 1.0, places=4)
                else:
                    self.assertEqual(advs, [0.0] * 4)

    async def test_command_line_loop_is_repeatable_and_quiet(self) -> None:
        runs = []
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(2):
                out_path = os.path.join(tmp, f"batches{i}.json")
                out = await asyncio.to_thread(
                    run_example, "grpo_loop.py", "--gateway", self.gw.url, "--seed", "3", "--group-size", "4",
                    "--steps", "2", "--poll-wait", "0.5", "--out", out_path,
                )
                self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
                self.assertNotIn("HTTP Request", out.stderr)
                # One line per group and per step, and the server's summary: nothing per request.
                self.assertLessEqual(len(out.stderr.splitlines()), 2 * 2 + 2 + 1, out.stderr)
                with open(out_path) as f:
                    runs.append([(b["groups"], b["rewards"], b["input_ids"]) for b in json.load(f)])
        self.assertEqual(runs[0], runs[1], "the same seed gives the same answers")
        rewards = [r for _, rs, _ in runs[0] for r in rs]
        self.assertIn(0.0, rewards)
        self.assertIn(1.0, rewards)

    async def test_command_line_loop_with_vllm(self) -> None:
        with FakeVLLM(HELLO) as fake, tempfile.TemporaryDirectory() as tmp:
            out_path = os.path.join(tmp, "batches.json")
            out = await asyncio.to_thread(
                run_example, "grpo_loop.py", "--gateway", self.gw.url, "--vllm", fake.url, "--model", "fake-model",
                "--group-size", "2", "--poll-wait", "0.5", "--out", out_path,
            )
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            with open(out_path) as f:
                [batch] = json.load(f)
        self.assertEqual(len(fake.requests), 4)  # 2 demo tasks x 2 rollouts
        self.assertEqual(batch["rewards"], [1.0, 1.0, 0.0, 0.0])  # vLLM always says Hello
        self.assertEqual(batch["advantages"], [0.0, 0.0, 0.0, 0.0])


if __name__ == "__main__":
    unittest.main()
