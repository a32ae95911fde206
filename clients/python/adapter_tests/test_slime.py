"""The slime adapter against a STAND-IN of slime's ``Sample`` (fields cited in ``slime_stand_in``),
a TEST DOUBLE of slime's SGLang router and a REAL gateway: ``generate`` turns the four-chain
rollout into one ``Sample`` per chain sharing the rollout's ``rollout_id``, each sampled id trained
once with its logprob and routing rows; ``reward_post_process`` baselines over rollouts; the
rollout-function form gives ``[group][rollout][chain]``."""

from __future__ import annotations

import argparse
import os
import unittest
from unittest import mock

import multi_chain
import slime_stand_in
from multi_chain import support

slime_stand_in.install()

from rollgate_client.adapters import slime as adapter  # noqa: E402

Sample = slime_stand_in.Sample


def reward_of(sample, run) -> float:
    return float(sample.metadata["reward"])


def args_for(router: slime_stand_in.RouterDouble) -> argparse.Namespace:
    return argparse.Namespace(
        sglang_router_ip="127.0.0.1",
        sglang_router_port=router.port,
        use_rollout_routing_replay=True,
        num_layers=slime_stand_in.LAYERS,
        moe_router_topk=slime_stand_in.TOP_K,
        grpo_std_normalization=True,
        reward_key=None,
        rollout_batch_size=1,
        rollout_temperature=1.0,
        rollout_top_p=1.0,
        rollout_top_k=-1,
        rollout_max_response_len=256,
    )


def base_sample(index: int, reward: float) -> Sample:
    return Sample(group_index=0, index=index, prompt="How many files are in /tmp?", metadata={"reward": reward})


class SlimeAdapterTest(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.gw = support.gateway()
        multi_chain.answer_ids(tuple(multi_chain.ANSWERS))

    def setUp(self) -> None:
        self.router = slime_stand_in.RouterDouble()
        self.args = args_for(self.router)
        env = {"ROLLGATE_URL": self.gw.url, "ROLLGATE_LAUNCHER": "multi_chain.launch_agent", "ROLLGATE_REWARD": "test_slime.reward_of"}
        patcher = mock.patch.dict(os.environ, env)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.addCleanup(self.router.close)

    async def test_generate_gives_one_sample_per_chain(self) -> None:
        sampling = {"temperature": 0.8, "top_p": 1.0, "max_new_tokens": 128}
        chains = await adapter.generate(self.args, base_sample(3, 1.0), sampling)
        self.assertEqual(sorted(s.metadata["rollgate"]["branch"] for s in chains), sorted(multi_chain.BRANCHES))
        self.assertEqual(chains[0].metadata["rollgate"]["branch"], "main")
        slime_stand_in.check_train_contract(self, [chains], self.args)
        self.assertEqual({s.rollout_id for s in chains}, {3})
        [key] = self.router.policies
        policy = self.router.policies[key]
        self.assertTrue(all(p["sampling_params"]["temperature"] == 0.8 for p in self.router.payloads))
        self.assertTrue(all(multi_chain.IM_END in p["sampling_params"]["stop_token_ids"] for p in self.router.payloads))
        pairs = []
        for s in chains:
            self.assertEqual(s.status, Sample.Status.COMPLETED)
            self.assertEqual(s.reward, 1.0)
            self.assertEqual(s.session_id, key)
            response = s.tokens[len(s.tokens) - s.response_length :]
            pairs += multi_chain.trained(response, s.loss_mask, s.rollout_log_probs)
            self.assertEqual(s.weight_versions, ["5"] * len(s.weight_versions))
            for p, row in enumerate(s.rollout_routed_experts):  # the router's rows, placed by the gateway
                want = [[slime_stand_in.expert(p, s.tokens[p], l, k) for k in range(slime_stand_in.TOP_K)] for l in range(slime_stand_in.LAYERS)]
                self.assertEqual(row, want)
        want = sorted((i, multi_chain.turn_logprob(t, k)) for t, out in enumerate(policy.outputs) for k, i in enumerate(out))
        self.assertEqual(sorted(pairs), want)

    async def test_without_a_reward_function_slimes_reward_model_scores_the_main_chain(self) -> None:
        slime_stand_in.async_rm.scored.clear()
        with mock.patch.dict(os.environ, {"ROLLGATE_REWARD": ""}):
            chains = await adapter.generate(self.args, base_sample(4, 1.0), {"max_new_tokens": 64})
        [scored] = slime_stand_in.async_rm.scored
        self.assertEqual(scored.metadata["rollgate"]["branch"], "main")
        self.assertEqual({s.reward for s in chains}, {slime_stand_in.RM_REWARD})

    async def test_a_failed_run_is_an_aborted_sample(self) -> None:
        with mock.patch.dict(os.environ, {"ROLLGATE_URL": f"http://127.0.0.1:{support.free_port()}"}):
            [sample] = await adapter.generate(self.args, base_sample(5, 1.0), {"max_new_tokens": 64})
        self.assertEqual(sample.status, Sample.Status.ABORTED)
        self.assertTrue(sample.remove_sample)
        self.assertIn("abort_reason", sample.metadata)

    async def test_teacher_logprobs_top_p_sets_and_turn_rewards_in_slimes_fields(self) -> None:
        args = args_for(self.router)
        args.rollout_top_p = 0.9
        env = {"ROLLGATE_URL": multi_chain.teaching_gateway().url, "ROLLGATE_REWARD": "multi_chain.step_rewards"}
        with mock.patch.dict(os.environ, env):
            chains = await adapter.generate(args, base_sample(6, 1.0), {"max_new_tokens": 64, "top_p": 0.9})
        slime_stand_in.check_train_contract(self, [chains], args)
        self.assertTrue(
            all(p["sampling_params"]["custom_params"]["return_top_p_token_ids"] for p in self.router.payloads)
        )
        for s in chains:
            start = len(s.tokens) - s.response_length
            multi_chain.check_teacher(self, s.tokens, s.loss_mask, s.teacher_log_probs, start)
            ids, offsets = s.rollout_top_p_token_ids, s.rollout_top_p_token_offsets
            for i, m in enumerate(s.loss_mask):
                if m:  # a trained id's kept set holds it: what the sampler drew it from
                    self.assertIn(s.tokens[start + i], ids[offsets[i] : offsets[i + 1]])
            rewards = s.metadata["rollgate"]["turn_rewards"]
            self.assertTrue(rewards and all(isinstance(r, float) for r in rewards))

    def test_reward_post_process_baselines_over_rollouts(self) -> None:
        # Rollout 0 has three chains, rollout 1 one: over samples the mean would be 0.75.
        samples = [Sample(group_index=0, index=0, rollout_id=0, reward=1.0) for _ in range(3)]
        samples.append(Sample(group_index=0, index=1, rollout_id=1, reward=0.0))
        raw, advantages = adapter.reward_post_process(self.args, samples)
        self.assertEqual(raw, [1.0, 1.0, 1.0, 0.0])
        self.assertEqual([round(a, 4) for a in advantages], [1.0, 1.0, 1.0, -1.0])


class SlimeRolloutFunctionTest(unittest.TestCase):
    """``generate_rollout`` runs its own event loop, as slime calls it."""

    def test_rollout_function_gives_group_rollout_chain(self) -> None:
        gw = support.gateway()
        router = slime_stand_in.RouterDouble()
        self.addCleanup(router.close)
        args = args_for(router)
        group = [base_sample(10, 1.0), base_sample(11, 0.0)]

        class DataSource:
            def get_samples(self, n):
                return [group][:n]

        env = {"ROLLGATE_URL": gw.url, "ROLLGATE_LAUNCHER": "multi_chain.launch_agent", "ROLLGATE_REWARD": "test_slime.reward_of"}
        with mock.patch.dict(os.environ, env):
            out = adapter.generate_rollout(args, 0, DataSource())
        [rollouts] = out.samples
        self.assertEqual(len(rollouts), 2)
        slime_stand_in.check_train_contract(self, rollouts, args)
        self.assertEqual([{s.rollout_id for s in chains} for chains in rollouts], [{10}, {11}])
        flat = [s for chains in rollouts for s in chains]
        _, advantages = adapter.reward_post_process(args, flat)
        self.assertEqual({round(a, 4) for a, s in zip(advantages, flat) if s.rollout_id == 10}, {1.0})
        self.assertEqual({round(a, 4) for a, s in zip(advantages, flat) if s.rollout_id == 11}, {-1.0})
        self.assertEqual(out.metrics["rollgate/chains"], 2 * len(multi_chain.BRANCHES))


if __name__ == "__main__":
    unittest.main()
