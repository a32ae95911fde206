"""The verifiers adapter against the real ``verifiers`` 0.4.0 (``.venv-engine``) and a REAL gateway:
``RollgateHarness.launch`` runs the agent program (``multi_chain.py``) in verifiers' own
``SubprocessRuntime``, resolves its turns through the run's vLLM RL API (``VllmDouble``, a TEST
DOUBLE of ``/inference/v1/generate`` answering with real Qwen3 ids, since a random-weight model
would not call the sub-agent tool), and writes a ``Trace`` whose branches are the rollout's four
chains: each sampled id in exactly one branch's mask, with its logprob."""

from __future__ import annotations

import sys
import unittest

import multi_chain
from multi_chain import support

try:
    from verifiers.v1.clients import ModelContext
    from verifiers.v1.configs.agent import AgentConfig
    from verifiers.v1.configs.client import TrainClientConfig
    from verifiers.v1.runtimes.subprocess import SubprocessConfig, SubprocessRuntime
    from verifiers.v1.task import TaskData
    from verifiers.v1.trace import AgentInfo, Trace, TraceTask
    from verifiers.v1.types import SamplingConfig

    from rollgate_client.adapters import MissingLogprobsError
    from rollgate_client.adapters.verifiers import RollgateHarness, RollgateHarnessConfig
except ImportError as e:  # pragma: no cover - outside .venv-engine
    raise support.skip("adapters: verifiers", f"verifiers not importable ({e}): run sh tests/engine/install_engine.sh")


class VllmDouble(multi_chain.JsonPostServer):
    """TEST DOUBLE of vLLM's ``POST /inference/v1/generate`` (``--enable-scale-out``): a
    ``ScriptedPolicy`` per ``X-Session-ID``, ``logprobs.content`` with ``token_id:<id>`` entries,
    ``weight_versions`` spans."""

    def __init__(self) -> None:
        self.policies: dict[str, multi_chain.ScriptedPolicy] = {}
        self.bodies: list[dict] = []
        self.with_logprobs = True
        super().__init__(self.answer)
        self.url += "/v1"

    def answer(self, path: str, headers, body: dict) -> dict:
        self.bodies.append({"path": path, "session": headers.get("X-Session-ID"), **body})
        policy = self.policies.setdefault(headers.get("X-Session-ID"), multi_chain.ScriptedPolicy())
        ids, logprobs = policy.sample(body["token_ids"])
        choice = {"token_ids": ids, "finish_reason": "stop", "weight_versions": [{"version": 9, "start": 0, "end": len(ids)}]}
        if self.with_logprobs:
            choice["logprobs"] = {"content": [{"token": f"token_id:{t}", "logprob": lp} for t, lp in zip(ids, logprobs)]}
        return {"choices": [choice]}


class RollgateHarnessTest(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.gw = support.gateway()
        multi_chain.answer_ids(tuple(multi_chain.ANSWERS))

    async def asyncSetUp(self) -> None:
        self.vllm = VllmDouble()
        self.addCleanup(self.vllm.close)
        self.runtime = SubprocessRuntime(SubprocessConfig())
        await self.runtime.start()
        self.addAsyncCleanup(self.runtime.stop)
        self.harness = RollgateHarness(
            RollgateHarnessConfig(
                gateway_url=self.gw.url, command=[sys.executable, str(multi_chain.HERE / "multi_chain.py"), "{prompt}"]
            )
        )
        self.ctx = ModelContext(
            model="policy", client=TrainClientConfig(base_url=self.vllm.url), sampling=SamplingConfig(temperature=0.6)
        )

    def new_trace(self) -> Trace:
        data = TaskData(prompt="How many files are in /tmp?")
        return Trace(task=TraceTask(type="Task", data=data, key="count-files"), agent=AgentInfo(config=AgentConfig()))

    async def launch(self, trace: Trace):
        return await self.harness.launch(self.ctx, trace, self.runtime, "", "", {}, trace.task.data)

    async def test_the_trace_has_one_branch_per_chain(self) -> None:
        trace = self.new_trace()
        result = await self.launch(trace)
        self.assertEqual(result.exit_code, 0, result.stderr)
        self.assertTrue(all(b["path"] == "/inference/v1/generate" and b["session"] == trace.id for b in self.vllm.bodies))
        self.assertTrue(all(b["sampling_params"]["temperature"] == 0.6 for b in self.vllm.bodies))
        branches = trace.branches
        self.assertEqual(len(branches), len(multi_chain.BRANCHES))
        self.assertEqual(
            sorted(b["branch"] for b in trace.info["rollgate"]["branches"]), sorted(multi_chain.BRANCHES)
        )
        [policy] = self.vllm.policies.values()
        pairs = []
        for branch in branches:
            # A branch is its chain's last call, prompt and output, as the engine saw and sampled it.
            self.assertIn(branch.token_ids, [p + o for p, o in zip(policy.prompts, policy.outputs)])
            pairs += multi_chain.trained(branch.token_ids, branch.sampled_mask, branch.logprobs)
        want = sorted((i, multi_chain.turn_logprob(t, k)) for t, out in enumerate(policy.outputs) for k, i in enumerate(out))
        self.assertEqual(sorted(pairs), want)  # each sampled id in one branch's mask, with its logprob
        self.assertEqual(len(trace.calls), sum(len(b["turns"]) for b in trace.info["rollgate"]["branches"]))
        self.assertEqual(trace.num_turns, len(trace.calls))
        # The sub-agent's root names the answer that called it; the messages are the agent's.
        sub = next(n for n in trace.nodes if n.semantic_parents)
        self.assertEqual(sub.semantic_parents[0].type, "subagent_call")
        self.assertEqual(trace.nodes[sub.semantic_parents[0].node].message.tool_calls[0].name, "Task")
        self.assertEqual(Trace.model_validate_json(trace.model_dump_json()).branches[0].token_ids, branches[0].token_ids)

    async def test_no_logprobs_is_refused(self) -> None:
        self.vllm.with_logprobs = False
        with self.assertRaises(MissingLogprobsError):
            await self.launch(self.new_trace())

if __name__ == "__main__":
    unittest.main()
