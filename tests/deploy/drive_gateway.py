"""Drives a running gateway from outside as a trainer and an agent would, with the Python client
(``clients/python``), and prints what happened as one JSON object for the calling test to check.

    python3 drive_gateway.py rollout URL ADMIN_TOKEN
        a rollout through the gate: an agent's turn, the trainer's completion with real Qwen3 ids,
        the rollout finished with reward 1, samples back
    python3 drive_gateway.py drain URL ADMIN_TOKEN -- CMD...
        an agent's turn claimed by the trainer, then CMD (which sends the gateway SIGTERM), then:
        readiness, a new turn, the claimed turn completed, the agent's answer
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "clients" / "python"))
sys.path.insert(0, str(ROOT / "clients" / "python" / "tests"))

from rollgate_client import RollgateClient  # noqa: E402
from support import HELLO, HI, chat, logprobs_for  # noqa: E402

USER = [{"role": "user", "content": "Say hello."}]


def get(url: str, token: str | None = None) -> tuple[int, str]:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError as e:  # the gateway is gone: report it, the calling test says what it expected
        return 0, json.dumps({"error": str(e)})


class AgentThread(threading.Thread):
    """One agent turn in the background (the agent's HTTP request stays open until answered)."""

    def __init__(self, base_url: str, token: str) -> None:
        super().__init__(daemon=True)
        self.base_url, self.token, self.answer = base_url, token, None

    def run(self) -> None:
        self.answer = chat(self.base_url, USER, token=self.token, timeout=60)


async def claimed_turn(client: RollgateClient) -> tuple[Any, AgentThread, Any]:
    rollout = await client.create_rollout(metadata={"driver": "drive_gateway"})
    agent = AgentThread(rollout.base_url, rollout.token)
    agent.start()
    pending = await client.next_request(wait=30, rollout=rollout.id)
    if pending is None:
        raise RuntimeError("no pending request within 30 s")
    return rollout, agent, pending


async def rollout_scenario(url: str, token: str) -> dict[str, Any]:
    async with RollgateClient(url, admin_token=token) as client:
        healthy = await client.health()
        rollout, agent, pending = await claimed_turn(client)
        await client.complete(pending.request_id, output_ids=HELLO, logprobs=logprobs_for(HELLO))
        agent.join(60)
        samples = await client.finish_rollout(rollout.id, reward=1.0)
        unauthorized = None
        async with RollgateClient(url, admin_token="wrong-token-of-some-length") as stranger:
            try:
                await stranger.list_rollouts()
            except Exception as e:  # noqa: BLE001 - the status is what the test checks
                unauthorized = getattr(e, "status", repr(e))
        return {
            "healthy": healthy,
            "base_url": rollout.base_url,
            "prompt_ids": pending.prompt_ids,
            "agent_status": agent.answer.status,
            "agent_content": agent.answer.content,
            "agent_usage": agent.answer.usage,
            "samples": [
                {
                    "input_ids": s.input_ids,
                    "loss_mask": s.loss_mask,
                    "logprobs": s.logprobs,
                    "reward": s.reward,
                }
                for s in samples
            ],
            "wrong_token_status": unauthorized,
        }


async def drain_scenario(url: str, token: str, command: list[str]) -> dict[str, Any]:
    async with RollgateClient(url, admin_token=token) as client:
        rollout, agent, pending = await claimed_turn(client)
        other = await client.create_rollout()
        subprocess.run(command, check=True, capture_output=True)
        # The signal is handled asynchronously: wait until the gateway says it is draining.
        deadline = time.monotonic() + 10
        ready_status, ready_body = get(url + "/ready")
        while ready_status == 200 and time.monotonic() < deadline:
            time.sleep(0.05)
            ready_status, ready_body = get(url + "/ready")
        new_turn = chat(other.base_url, USER, token=other.token, timeout=30)
        await client.complete(pending.request_id, output_ids=HI, logprobs=logprobs_for(HI))
        agent.join(60)
        return {
            "ready_status": ready_status,
            "ready": json.loads(ready_body),
            "new_turn_status": new_turn.status,
            "new_turn_body": new_turn.body,
            "in_flight_status": agent.answer.status if agent.answer else None,
            "in_flight_content": agent.answer.content if agent.answer else None,
        }


def main() -> None:
    scenario, url, token = sys.argv[1:4]
    if scenario == "rollout":
        report = asyncio.run(rollout_scenario(url, token))
    elif scenario == "drain":
        report = asyncio.run(drain_scenario(url, token, sys.argv[sys.argv.index("--") + 1 :]))
    else:
        raise SystemExit(f"unknown scenario {scenario}")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
