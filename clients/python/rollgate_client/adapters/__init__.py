"""Trainer adapters: rollgate rollouts in the shape each trainer's hook takes.

This package imports no trainer. Each adapter is its own module and imports its trainer when you
import it (``rollgate_client.adapters.openenv`` needs ``openenv``, ``.verl`` needs ``verl``,
``.verifiers`` needs ``verifiers``; ``.slime`` imports slime only inside the calls slime makes;
``.trl`` imports no trainer at all):

- ``openenv``: ``RollgateSession``/``RollgateSessionFactory``, an OpenEnv ``TrainableSession``
  whose ``fetch_training_trace()`` is a validated ``TrainingTrace`` (TRL's ``HarnessRolloutWorker``);
- ``slime``: ``generate`` for ``--custom-generate-function-path``, ``generate_rollout`` for
  ``--rollout-function-path``, ``reward_post_process`` for ``--custom-reward-post-process-path``;
- ``verl``: ``RollgateAgentLoop``, an ``AgentLoopBase`` registered as ``rollgate``;
- ``verifiers``: ``RollgateHarness``, a v1 ``Harness`` that emits the rollout as a ``Trace``;
- ``trl``: ``rollout_func`` for TRL's ``GRPOTrainer`` (one rollout per prompt row) and
  ``trainer_policy``, a gate handler sampling with the trainer's own model (imports ``torch``
  when called).

What they share lives here: ``AgentRollout`` (create, launch, resolve, finish), ``chain_rows`` and
``trained_calls`` (samples → rows or calls, one chain at a time, every sampled id trained once) and
the missing-logprobs check. Docs: ``docs/trainers/``.
"""

from .agent_rollout import AgentRollout, Launcher, agent_env, cli_launcher, resolve_callable
from .chain_rows import (
    MISSING_LOGPROBS_MODES,
    ChainRow,
    MissingLogprobsError,
    MissingTeacherError,
    TrainedCall,
    chain_rows,
    check_missing_logprobs_mode,
    trained_calls,
)

__all__ = [
    "MISSING_LOGPROBS_MODES",
    "AgentRollout",
    "ChainRow",
    "Launcher",
    "MissingLogprobsError",
    "MissingTeacherError",
    "TrainedCall",
    "agent_env",
    "chain_rows",
    "check_missing_logprobs_mode",
    "cli_launcher",
    "resolve_callable",
    "trained_calls",
]
