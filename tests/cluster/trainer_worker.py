"""A trainer for the cluster tests: the real Python client (``RollgateClient.serve_requests``)
answering a gateway's requests with the scripted policy of ``load.ts`` (TEST DOUBLE at the model
boundary: its ids are a function of the prompt). Runs until its stdin closes, then prints what
``serve_requests`` did as one JSON line.

    python3 trainer_worker.py URL CONCURRENCY
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))

from rollgate_client import Completion, RollgateClient  # noqa: E402

END = 151645  # <|im_end|>
DIGIT = 15  # "0" in Qwen3's vocabulary


def scripted_reply(prompt: list[int]) -> list[int]:
    """The same number as ``scriptedReply`` in load.ts, written as digit tokens."""
    n = (len(prompt) * 7919 + prompt[-4] * 31) % 100_000
    return [DIGIT + int(d) for d in str(n)] + [END]


def scripted_logprob(i: int) -> float:
    return -((i % 7) + 1) / 100


async def main(url: str, concurrency: int) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    # stdin closed: the test is done with this trainer.
    loop.add_reader(sys.stdin.fileno(), lambda: sys.stdin.read(1) or stop.set())

    async def handler(request):
        ids = scripted_reply(request.prompt_ids)
        return Completion(output_ids=ids, logprobs=[scripted_logprob(i) for i in range(len(ids))])

    async with RollgateClient(url, timeout=30.0) as client:
        stats = await client.serve_requests(
            handler, concurrency=concurrency, stop_event=stop, poll_wait=1.0, retry_delay=0.2
        )
    print(json.dumps(dataclasses.asdict(stats)), flush=True)


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="trainer: %(message)s")
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
