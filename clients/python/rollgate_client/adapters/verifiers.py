"""verifiers / prime-rl (``verifiers==0.4.0``): ``RollgateHarness``, a v1 ``Harness`` that runs the
agent CLI against a rollgate rollout and writes the rollout into the run's ``Trace``.

    from rollgate_client.adapters.verifiers import RollgateHarness, RollgateHarnessConfig
    harness = RollgateHarness(RollgateHarnessConfig(
        gateway_url="http://127.0.0.1:7860",
        command=["claude", "-p", "{prompt}", "--output-format", "json"]))

``launch`` creates a rollout (``group`` = the task's key, ``id`` = ``vf-<trace id>``), runs
``command`` in the run's runtime (``{prompt}`` replaced by the task's prompt, the rollout's URLs
and token in the environment: ``agent_env``), resolves every turn with the run's model
(``ctx``: vLLM's ``/inference/v1/generate`` at ``ctx.client.base_url``, the run's sampling, the
``X-Session-ID`` of the trace, so prime-rl's router keeps a rollout on one engine), finishes the
rollout (verifiers scores the trace afterwards, with the taskset's rubric) and fills
``trace.nodes`` and ``trace.calls``. The program's model calls go to rollgate, not to the
``endpoint`` verifiers hands over: rollgate is the interception.

Several chains: one branch per chain, each its own root-to-leaf path of nodes (no node is shared
between branches, so each sampled id is in one branch's ``mask``; a fork's shared prefix is context
in the fork's branch), and one ``Trace`` for the rollout, so prime-rl takes the rollout's reward
once and gives its advantage to every branch. Per chain and turn: the new messages (the turn's
bridge and delta ids on the last of them), then the answer with its output ids, ``mask`` = the
chain trains the id, ``logprobs`` over the masked ids, MoE ``routed_experts`` per node (the final
position, which no forward pass routes, gets a copy of the row before it, verifiers' own
convention). A sub-agent's root node has a ``subagent_call`` semantic parent: the answer that
called it. A trained id without a logprob is refused (``MissingLogprobsError``), or with
``missing_logprobs="context"`` kept as context.
"""

from __future__ import annotations

import base64
from typing import Any, Literal

import numpy as np
from pydantic import Field

from verifiers.v1.clients import ModelContext
from verifiers.v1.clients.client import SESSION_ID_HEADER
from verifiers.v1.configs.client import resolve_api_key
from verifiers.v1.configs.harness import HarnessConfig
from verifiers.v1.graph import MessageNode
from verifiers.v1.harness import Harness
from verifiers.v1.runtimes import ProgramResult, Runtime
from verifiers.v1.semantic import ParentLink
from verifiers.v1.task import TaskData
from verifiers.v1.trace import ModelCall, Trace
from verifiers.v1.types import AssistantMessage, SystemMessage, Tool, ToolCall, ToolMessage, UserMessage

from ..client import Handler, RollgateClient
from ..http_client import open_http_client
from ..schema import Completion, PendingRequest, Sample
from .agent_rollout import AgentRollout, Launcher, agent_env
from .chain_rows import chain_rows
from .turn_messages import turn_messages

__all__ = ["RollgateHarness", "RollgateHarnessConfig", "vllm_client", "vllm_generate"]


class RollgateHarnessConfig(HarnessConfig):
    id: str = "rollgate"
    gateway_url: str = "http://127.0.0.1:7860"
    admin_token: str | None = None
    command: list[str] = Field(default_factory=list)
    """The agent CLI, run in the runtime; ``{prompt}`` in an argument becomes the task's prompt."""
    missing_logprobs: Literal["refuse", "context"] = "refuse"


def _message(m: dict[str, Any]) -> Any:
    role = m["role"]
    if role == "system":
        return SystemMessage(content=m.get("content") or "")
    if role == "user":
        return UserMessage(content=m.get("content") or "")
    if role == "tool":
        return ToolMessage(tool_call_id=m.get("tool_call_id") or "", content=m.get("content") or "", name=m.get("name"))
    calls = [
        ToolCall(id=c["id"], name=c["function"]["name"], arguments=c["function"]["arguments"])
        for c in m.get("tool_calls") or []
    ]
    return AssistantMessage(content=m.get("content"), reasoning_content=m.get("reasoning_content"), tool_calls=calls or None)


def vllm_generate(ctx: ModelContext, http: Any) -> Handler:
    """Resolves a rollout's turns with the run's vLLM (``/inference/v1/generate``, the RL API
    prime-rl serves) over ``http`` (``vllm_client``), sampling as the run samples."""
    sampling = {k: v for k, v in ctx.sampling.model_dump(exclude_none=True).items() if k != "reasoning_effort"}

    async def generate(pending: PendingRequest) -> Completion:
        params = {**sampling, "logprobs": 1, "skip_special_tokens": False, "stop_token_ids": pending.stop_token_ids}
        if pending.max_tokens is not None:
            params["max_tokens"] = min(pending.max_tokens, sampling.get("max_tokens") or pending.max_tokens)
        body = {"model": ctx.model, "token_ids": list(pending.prompt_ids), "sampling_params": params}
        resp = await http.request("POST", "/inference/v1/generate", json_body=body)
        if resp.status != 200:
            raise RuntimeError(f"vLLM /inference/v1/generate answered {resp.status}: {resp.text[:300]}")
        choice = resp.json()["choices"][0]
        ids = list(choice["token_ids"])
        logprobs = [e["logprob"] for e in ((choice.get("logprobs") or {}).get("content") or [])]
        spans = choice.get("weight_versions") or []
        return Completion(
            ids,
            logprobs if len(logprobs) == len(ids) else None,
            finish_reason="length" if choice.get("finish_reason") == "length" else "stop",
            weight_version=spans[-1]["version"] if spans else None,
        )

    return generate


def vllm_client(ctx: ModelContext, session_id: str) -> Any:
    """An HTTP client for the run's vLLM, with its key and the trace's ``X-Session-ID``."""
    base = ctx.client.base_url.rstrip("/").removesuffix("/v1")
    headers = {SESSION_ID_HEADER: session_id, "Authorization": f"Bearer {resolve_api_key(ctx.client)}"}
    return open_http_client(base, timeout=600.0, headers=headers)


class RollgateHarness(Harness[RollgateHarnessConfig]):
    """See the module. ``launcher`` (a ``Launcher``) runs the agent instead of ``command``;
    ``generate`` resolves turns instead of the run's vLLM."""

    APPENDS_SYSTEM_PROMPT = False
    NEEDS_CONTAINER = True

    def __init__(
        self, config: RollgateHarnessConfig, *, launcher: Launcher | None = None, generate: Handler | None = None
    ) -> None:
        super().__init__(config)
        self.launcher = launcher
        self.generate = generate

    def _runtime_launcher(self, runtime: Runtime, prompt: str | None) -> Launcher:
        async def launch(rollout: Any, task: Any) -> int:
            argv = [arg.replace("{prompt}", prompt or "") for arg in self.config.command]
            result = await runtime.run(argv, {**self.config.resolved_env, **agent_env(rollout)})
            self._result = result
            return result.exit_code

        return launch

    async def launch(
        self,
        ctx: ModelContext,
        trace: Trace,
        runtime: Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: TaskData,
        tool_interception_url: str | None = None,
    ) -> ProgramResult:
        self._result: ProgramResult | None = None
        _, prompt = self.resolve_text_prompt(data)
        if self.launcher is None and not self.config.command:
            raise ValueError("RollgateHarnessConfig.command is empty: name the agent CLI to run")
        launcher = self.launcher or self._runtime_launcher(runtime, prompt)
        http = None if self.generate else vllm_client(ctx, trace.id)
        generate = self.generate or vllm_generate(ctx, http)
        try:
            samples, messages, run = await self._run(launcher, generate, trace, data)
        finally:
            if http is not None:
                await http.close()
        self.write_trace(trace, samples, messages, ctx.model)
        trace.info["rollgate"] = {
            "rollout_id": run.rollout.id,
            "branches": [{"branch": s.branch, "sample_index": s.index, "turns": list(s.turns)} for s in samples],
        }
        if self._result is not None:
            return self._result
        return ProgramResult(exit_code=run.exit_code or 0, stdout="", stderr="")

    async def _run(self, launcher: Launcher, generate: Handler, trace: Trace, data: TaskData) -> tuple:
        async with RollgateClient(self.config.gateway_url, self.config.admin_token, timeout=60) as client:
            run = await AgentRollout.start(
                client,
                launcher,
                task=data,
                generate=generate,
                id=f"vf-{trace.id}",
                group=trace.task.key or trace.task.hash,
                metadata={"verifiers_task": data.id or data.name},
            )
            samples = await run.complete()  # verifiers bounds the agent stage: its timeout cancels this
            return samples, turn_messages(await client.tree(run.rollout.id)), run

    def write_trace(self, trace: Trace, samples: list[Sample], messages: dict[str, dict[str, Any]], model: str) -> None:
        """Appends one root-to-leaf path of nodes per chain, and a ``ModelCall`` per answer node."""
        rows = {r.sample.index: r for r in chain_rows(samples, missing_logprobs=self.config.missing_logprobs)}
        answer_node: dict[str, int] = {}
        subagent_roots: list[tuple[int, Sample]] = []
        for sample in samples:
            row = rows.get(sample.index)
            mask = [0] * len(sample.input_ids)
            if row is not None:
                start = len(row.prompt_ids)
                mask[start:] = row.response_mask
            experts = self._experts(sample)
            parent: int | None = None
            seen = 0  # messages already on this path
            for k, span in enumerate(sample.turn_spans):
                record = messages.get(str(span["turn"])) or {}
                history = record.get("messages") or []
                new = history[seen:] or [{"role": "user", "content": ""}]
                for j, m in enumerate(new):
                    last = j == len(new) - 1
                    ids = sample.input_ids[span["start"] : span["output_start"]] if last else []
                    node = MessageNode(
                        parent=parent,
                        tools=[Tool(**t["function"]) for t in record.get("tools") or []] if parent is None else [],
                        message=_message(m),
                        token_ids=ids,
                        mask=[False] * len(ids),
                        routed_experts=None if experts is None or not last else experts[span["start"] : span["output_start"]],
                    )
                    trace.nodes.append(node)
                    if parent is None and sample.branch == "subagent":
                        subagent_roots.append((len(trace.nodes) - 1, sample))
                    parent = len(trace.nodes) - 1
                out = sample.input_ids[span["output_start"] : span["end"]]
                out_mask = mask[span["output_start"] : span["end"]]
                lps = [] if row is None or row.response_logprobs is None else row.response_logprobs
                offset = len(row.prompt_ids) if row is not None else 0
                trace.nodes.append(
                    MessageNode(
                        parent=parent,
                        message=_message(record.get("answer") or {"role": "assistant", "content": ""}),
                        sampled=True,
                        token_ids=out,
                        mask=[bool(m) for m in out_mask],
                        logprobs=[lps[i - offset] for i in range(span["output_start"], span["end"]) if mask[i]],
                        routed_experts=None if experts is None else experts[span["output_start"] : span["end"]],
                    )
                )
                parent = len(trace.nodes) - 1
                answer_node.setdefault(str(span["turn"]), parent)
                seen = len(history) + 1
                answer = record.get("answer") or {}
                finish = "tool_calls" if answer.get("tool_calls") else "length" if record.get("finish_reason") == "length" else "stop"
                trace.calls.append(ModelCall(node=parent, model=model, endpoint="/inference/v1/generate", finish_reason=finish))
        for root, sample in subagent_roots:
            caller = (sample.extra.get("parent") or {}).get("turn")
            if caller is not None and str(caller) in answer_node:
                trace.nodes[root].semantic_parents.append(ParentLink(node=answer_node[str(caller)], type="subagent_call"))

    @staticmethod
    def _experts(sample: Sample) -> np.ndarray | None:
        """The sample's routing rows, one per position (the last a copy of the one before)."""
        if not sample.routed_experts:
            return None
        spec = sample.routed_experts
        rows = np.frombuffer(base64.b64decode(spec["data"]), dtype=np.dtype(spec["dtype"]).newbyteorder("<"))
        rows = rows.reshape(spec["shape"]).astype(np.uint8 if spec["dtype"] == "uint8" else np.uint16)
        return np.concatenate([rows, rows[-1:]], axis=0)
