"""The verl adapter against the real ``verl`` 0.9.1 (``.venv-trainers``; its agent-loop module imports
on CPU, its Ray workers need GPUs) and a REAL gateway: ``RollgateAgentLoop`` is a registered
``AgentLoopBase`` built the way verl's worker builds it (hydra instantiate of the registry entry);
its ``run`` resolves the four-chain rollout's turns through ``server_manager.generate``, here
``ServerManagerDouble`` (a TEST DOUBLE of verl's ``LLMServerClient``, since no verl server runs on
CPU) returning verl's own ``TokenOutput`` with real Qwen3 ids and MoE routing rows. The outputs go
through verl's own code: ``AgentLoopOutput.as_dict`` (what the v1 trainer stores) and
``compute_advantage_for_multi_trajectories`` (GRPO over rollouts, broadcast to their chains)."""

from __future__ import annotations

import unittest

import multi_chain
from multi_chain import support

try:
    import hydra
    import numpy as np
    import torch
    from omegaconf import OmegaConf
    from transformers import AutoTokenizer
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, _agent_loop_registry
    from verl.protocol import DataProto
    from verl.trainer.ppo import core_algos
    from verl.trainer.ppo.v1.utils import compute_advantage_for_multi_trajectories
    from verl.workers.rollout.replica import TokenOutput

    from rollgate_client.adapters import MissingLogprobsError
    from rollgate_client.adapters.verl import RollgateAgentLoop
except ImportError as e:  # pragma: no cover - outside .venv-trainers
    raise support.skip("adapters: verl", f"verl not importable ({e}): run sh tests/engine/install_trainers.sh")

LAYERS, TOP_K = 2, 2


def expert(p: int, token: int, layer: int, k: int) -> int:
    """The double's routing: a function of position and token, so a misaligned row shows."""
    return (token * 13 + p * 5 + layer * 3 + k) % 200


class ServerManagerDouble:
    """TEST DOUBLE of verl's ``LLMServerClient.generate``: a ``ScriptedPolicy`` per request id (one
    per rollout: the adapter's sticky id), routing rows for positions 0 … len − 2."""

    def __init__(self, with_logprobs: bool = True) -> None:
        self.policies: dict[str, multi_chain.ScriptedPolicy] = {}
        self.calls: list[dict] = []
        self.with_logprobs = with_logprobs

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs) -> TokenOutput:
        self.calls.append({"request_id": request_id, "sampling_params": dict(sampling_params)})
        ids, logprobs = self.policies.setdefault(request_id, multi_chain.ScriptedPolicy()).sample(prompt_ids)
        seq = list(prompt_ids) + ids
        rows = np.array(
            [[[expert(p, seq[p], l, k) for k in range(TOP_K)] for l in range(LAYERS)] for p in range(len(seq) - 1)],
            dtype=np.int32,
        )
        return TokenOutput(
            token_ids=ids,
            log_probs=logprobs if self.with_logprobs else None,
            routed_experts=rows,
            stop_reason="completed",
            extra_fields={"global_steps": 4},
        )


def reward_of(task, run) -> float:
    return float(task["reward"])


TOKENIZER = None  # loaded once, in setUpClass (outside the event loop)


def loop_for(server: ServerManagerDouble, *, use_v1: bool = True, **entry) -> RollgateAgentLoop:
    config = OmegaConf.create(
        {
            "trainer": {"use_v1": use_v1},
            "actor_rollout_ref": {"rollout": {"prompt_length": 1024, "response_length": 512}},
            "data": {},
        }
    )
    registered = {**_agent_loop_registry["rollgate"], **entry}
    return hydra.utils.instantiate(
        config=registered,
        trainer_config=DictConfigWrap(config=config),
        server_manager=server,
        tokenizer=TOKENIZER,
        processor=None,
        hf_model_type="qwen3",
        dataset_cls=object,
        data_config=DictConfigWrap(config.data),
    )


class VerlAgentLoopTest(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        global TOKENIZER
        cls.gw = support.gateway()
        multi_chain.answer_ids(tuple(multi_chain.ANSWERS))
        TOKENIZER = AutoTokenizer.from_pretrained(str(multi_chain.TOKENIZER.parent))

    def entry(self) -> dict:
        return {
            "gateway_url": self.gw.url,
            "launcher": "multi_chain.launch_agent",
            "reward_fn": "test_verl.reward_of",
        }

    async def test_run_gives_one_output_per_chain_through_verls_servers(self) -> None:
        server = ServerManagerDouble()
        loop = loop_for(server, **self.entry())
        self.assertIsInstance(loop, RollgateAgentLoop)
        sampling = {"temperature": 0.7, "top_p": 1.0, "top_k": -1, "repetition_penalty": 1.0, "logprobs": True}
        outputs = await loop.run(dict(sampling), raw_prompt=[], uid="task-1", index=0, reward=1.0)
        self.assertEqual(sorted(o.extra_fields["rollgate"]["branch"] for o in outputs), sorted(multi_chain.BRANCHES))
        self.assertEqual(outputs[-1].extra_fields["rollgate"]["branch"], "main")  # verl scores the last
        [request_id] = server.policies
        self.assertEqual({c["request_id"] for c in server.calls}, {request_id})  # sticky: one rollout, one id
        self.assertTrue(all(c["sampling_params"]["temperature"] == 0.7 for c in server.calls))
        policy = server.policies[request_id]
        pairs = []
        for out in outputs:
            self.assertEqual(out.reward_score, 1.0)
            self.assertEqual(len(out.response_ids), len(out.response_mask))
            self.assertEqual(len(out.response_ids), len(out.response_logprobs))
            self.assertEqual(out.extra_fields["min_global_steps"], 4)
            seq = out.prompt_ids + out.response_ids
            pairs += multi_chain.trained(out.response_ids, out.response_mask, out.response_logprobs)
            # Routing replay: verl's rows, placed by the gateway, line up with every position.
            rows = out.routed_experts
            self.assertEqual(rows.shape, (len(seq) - 1, LAYERS, TOP_K))
            for p in range(len(seq) - 1):
                self.assertEqual(rows[p].tolist(), [[expert(p, seq[p], l, k) for k in range(TOP_K)] for l in range(LAYERS)])
            stored = out.as_dict()  # what verl's v1 trainer puts into TransferQueue
            self.assertEqual(stored["responses"].tolist(), out.response_ids)
            self.assertEqual(stored["rm_scores"][-1].item(), 1.0)
        want = sorted(
            (i, multi_chain.turn_logprob(t, k)) for t, out in enumerate(policy.outputs) for k, i in enumerate(out)
        )
        self.assertEqual(sorted(pairs), want)  # every sampled id trained once, in exactly one output

    async def test_verl_gives_each_rollout_one_advantage_over_its_chains(self) -> None:
        server = ServerManagerDouble()
        loop = loop_for(server, **self.entry())
        sampling = {"temperature": 1.0, "logprobs": True}
        keys, outputs = [], []
        for session, reward in enumerate((1.0, 0.0)):
            outs = await loop.run(dict(sampling), raw_prompt=[], uid="task-2", index=0, reward=reward)
            keys += [f"task2_{session}_{i}" for i in range(len(outs))]
            outputs += outs
        width = max(len(o.response_ids) for o in outputs)
        mask = torch.tensor([o.response_mask + [0] * (width - len(o.response_mask)) for o in outputs])
        rewards = torch.zeros(mask.shape)
        for i, o in enumerate(outputs):
            rewards[i, len(o.response_ids) - 1] = o.reward_score
        data = DataProto.from_dict(
            tensors={"response_mask": mask, "token_level_rewards": rewards},
            non_tensors={"uid": np.array(["task2"] * len(outputs), dtype=object)},
        )
        data = compute_advantage_for_multi_trajectories(data, keys, core_algos.AdvantageEstimator.GRPO)
        per_row = [data.batch["advantages"][i][mask[i].bool()].unique().tolist() for i in range(len(outputs))]
        n = len(multi_chain.BRANCHES)
        self.assertEqual(len(outputs), 2 * n)
        for row in per_row[:n]:
            self.assertEqual(len(row), 1)
            self.assertAlmostEqual(row[0], 0.7071, places=3)  # (1 - 0.5) / std([1, 0], unbiased)
        for row in per_row[n:]:
            self.assertAlmostEqual(row[0], -0.7071, places=3)

    async def test_teacher_logprobs_and_turn_scores_in_verls_fields(self) -> None:
        entry = {**self.entry(), "gateway_url": multi_chain.teaching_gateway().url, "reward_fn": "multi_chain.step_rewards"}
        outputs = await loop_for(ServerManagerDouble(), **entry).run(
            {"temperature": 1.0}, raw_prompt=[], uid="task-6", index=0
        )
        for out in outputs:
            seq = out.prompt_ids + out.response_ids
            ids, logprobs = out.extra_fields["teacher_ids"], out.extra_fields["teacher_logprobs"]
            self.assertEqual(tuple(ids.shape), (len(seq), 1))  # what verl's distillation path carries
            self.assertEqual(ids[:, 0].tolist(), seq)
            mask = [0] * len(out.prompt_ids) + out.response_mask
            for p, m in enumerate(mask):  # float32, as verl keeps them; 0.0 where the row trains nothing
                want = multi_chain.teacher_logprob(p, seq[p]) if m else 0.0
                self.assertAlmostEqual(logprobs[p, 0].item(), want, places=5, msg=f"position {p}")
            scores = out.extra_fields["turn_scores"]
            self.assertTrue(scores and scores == [r for r in out.extra_fields["rollgate"]["turn_rewards"] if r is not None])
            stored = out.as_dict()  # verl moves them out of extra_fields into the row
            self.assertEqual(tuple(stored["teacher_logprobs"].shape), (len(seq), 1))

    async def test_the_legacy_trainer_refuses_a_multi_chain_rollout(self) -> None:
        loop = loop_for(ServerManagerDouble(), use_v1=False, **self.entry())
        with self.assertRaisesRegex(ValueError, "trainer.use_v1=True"):
            await loop.run({"temperature": 1.0}, raw_prompt=[], uid="task-3", index=0, reward=1.0)

    async def test_no_logprobs_with_recompute_sends_none(self) -> None:
        server = ServerManagerDouble(with_logprobs=False)
        loop = loop_for(server, **self.entry(), missing_logprobs="recompute")
        outputs = await loop.run({"temperature": 1.0}, raw_prompt=[], uid="task-4", index=0, reward=1.0)
        self.assertTrue(all(o.response_logprobs is None for o in outputs))
        self.assertTrue(all(c["sampling_params"]["logprobs"] is False for c in server.calls))
        self.assertNotIn("rollout_log_probs", outputs[0].as_dict())

    async def test_no_logprobs_is_refused_by_default(self) -> None:
        refusing = loop_for(ServerManagerDouble(with_logprobs=False), **self.entry())
        with self.assertRaises(MissingLogprobsError):
            await refusing.run({"temperature": 1.0}, raw_prompt=[], uid="task-5", index=0, reward=1.0)

if __name__ == "__main__":
    unittest.main()
