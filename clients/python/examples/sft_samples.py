#!/usr/bin/env python3
"""Supervised fine-tuning on rollgate samples: a causal LM learns the ids its samples train.

    python sft_samples.py BASE_DIR SAMPLES.jsonl OUT_DIR [--vary TEXT]... [--floor 0.9]

SAMPLES holds one sample per line as the trainer API returns them (``input_ids``, ``loss_mask``;
``GET /api/rollouts/:id/samples`` with ``ids=json``). The loss is the cross-entropy of every id
with ``loss_mask`` 1, given the ids before it: the agent's own turns, never the tool outputs or
prompts around them. It is how the tests make a tiny model that drives a real agent CLI (its
scripted turns recorded through rollgate, then learned), and how the GRPO example makes its
starting weights.

Cheap on a CPU because the model attends through a sliding window (``--window``, set in the
config for every layer; vLLM and ``transformers`` both honour it): a position sees at most
``layers × window`` ids back, so each trained span is computed from that many ids before it, at
their true positions, and the result is exactly that of the whole sequence. The head
(151,936 rows for Qwen3) is applied at the trained positions only.

Prompts vary between runs (a workspace path, the date, the kernel version): with ``--vary`` each
step trains on the recorded sample or, every other step, on one whose context before the first
trained id has each ``--vary`` text and every ISO date replaced by a random look-alike (decoded,
replaced, re-encoded), so what the model answers does not hinge on them.

Stopping: once every *determined* trained id (one whose visible context no other sample continues
differently) has probability ≥ ``--floor`` on the recorded samples and on fresh variants; above
one half that id is the greedy answer, with a margin float differences between engines cannot
cross. Where samples with the same context continue differently, the model learns their mix (the
GRPO example's starting weights solve the task about half the time that way); ``--steps N`` trains
exactly N steps instead. Writes the weights (float32, Hugging Face layout) and the tokenizer files.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import time
from typing import Any, Iterable

DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def look_alike(text: str, rng: random.Random) -> str:
    """``text`` with about a third of its ASCII letters and digits swapped for others of their kind."""
    out = []
    for ch in text:
        if rng.random() < 0.35 and ch.isascii() and ch.isalnum():
            pool = "0123456789" if ch.isdigit() else (
                "abcdefghijklmnopqrstuvwxyz" if ch.islower() else "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
            ch = rng.choice(pool)
        out.append(ch)
    return "".join(out)


def spans(mask: list[int]) -> list[tuple[int, int]]:
    """The runs ``[start, end)`` of 1 in a loss mask."""
    out, start = [], None
    for i, m in enumerate(list(mask) + [0]):
        if m and start is None:
            start = i
        elif not m and start is not None:
            out.append((start, i))
            start = None
    return out


def determined(samples: list[dict[str, Any]], reach: int) -> list[set[int]]:
    """Per sample, the trained positions whose visible context (the ``reach`` ids before them) no
    other sample continues with another id: what the model can be made sure of. The others are a
    split in the data, learned as its mix."""
    nexts: dict[tuple[int, ...], set[int]] = {}

    def key(s: dict[str, Any], i: int) -> tuple[int, ...]:
        return tuple(s["input_ids"][max(0, i - reach):i])

    for s in samples:
        for i, m in enumerate(s["loss_mask"]):
            if m:
                nexts.setdefault(key(s, i), set()).add(s["input_ids"][i])
    return [{i for i, m in enumerate(s["loss_mask"]) if m and len(nexts[key(s, i)]) == 1} for s in samples]


class Variants:
    """Copies of a sample whose context before its first trained id is varied."""

    def __init__(self, tokenizer: Any, vary: Iterable[str], seed: int) -> None:
        self.tok = tokenizer
        self.vary = [v for v in vary if v]
        self.rng = random.Random(seed)

    def make(self, sample: dict[str, Any]) -> dict[str, Any]:
        ids, mask = sample["input_ids"], sample["loss_mask"]
        first = next((i for i, m in enumerate(mask) if m), len(ids))
        text = self.tok.decode(ids[:first], skip_special_tokens=False)
        for v in self.vary:
            text = text.replace(v, look_alike(v, self.rng))
        text = DATE.sub(lambda _: f"{self.rng.randint(2025, 2031)}-{self.rng.randint(1, 12):02d}-"
                                  f"{self.rng.randint(1, 28):02d}", text)
        head = self.tok.encode(text, add_special_tokens=False).ids
        shift = len(head) - first
        return {
            "input_ids": head + ids[first:],
            "loss_mask": [0] * len(head) + mask[first:],
            "determined": {i + shift for i in sample["determined"]},
        }


def reach(model: Any) -> int:
    """How many ids back a position's output can depend on (every layer sees its window)."""
    c = model.config
    window = c.sliding_window if getattr(c, "use_sliding_window", False) else None
    return c.num_hidden_layers * window if window else 1 << 30


def span_logprobs(model: Any, ids: list[int], start: int, end: int) -> Any:
    """Logprobs of ``ids[start:end]``, computed from the ids in reach before them."""
    import torch

    left = max(0, start - reach(model))
    x = torch.tensor([ids[left:end - 1]])
    pos = torch.arange(left, end - 1)[None]
    hidden = model.model(input_ids=x, position_ids=pos).last_hidden_state[0, start - 1 - left:]
    logprobs = torch.log_softmax(model.lm_head(hidden).float(), -1)
    return logprobs.gather(1, torch.tensor(ids[start:end])[:, None])[:, 0]


def sample_logprobs(model: Any, sample: dict[str, Any]) -> dict[int, float]:
    """Every trained position's logprob under ``model``."""
    import torch

    out: dict[int, float] = {}
    with torch.no_grad():
        for a, b in spans(sample["loss_mask"]):
            for i, lp in zip(range(a, b), span_logprobs(model, sample["input_ids"], a, b).tolist()):
                out[i] = lp
    return out


def lowest_determined(model: Any, samples: list[dict[str, Any]]) -> float:
    """The lowest probability of a determined trained id over ``samples``."""
    import math

    worst = 1.0
    for s in samples:
        for i, lp in sample_logprobs(model, s).items():
            if i in s["determined"]:
                worst = min(worst, math.exp(lp))
    return worst


def with_window(base: str, window: int) -> Any:
    """``base``'s config with a sliding attention window in every layer."""
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(base)
    config.update({"use_sliding_window": True, "sliding_window": window, "max_window_layers": 0,
                   "layer_types": ["sliding_attention"] * config.num_hidden_layers})
    return config


def train(
    base: str,
    samples: list[dict[str, Any]],
    out: str,
    *,
    vary: Iterable[str] = (),
    window: int = 64,
    lr: float = 3e-3,
    floor: float | None = 0.9,
    steps: int | None = None,
    max_steps: int = 2000,
    check_every: int = 20,
    fresh_variants: int = 2,
    seed: int = 0,
    log: Any = print,
) -> dict[str, Any]:
    """Fine-tunes ``base`` on ``samples`` into ``out``; returns ``{steps, seconds, lowest}``.
    Raises ``RuntimeError`` when ``floor`` is not reached within ``max_steps``."""
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    rng = random.Random(seed)
    variants = Variants(Tokenizer.from_file(f"{base}/tokenizer.json"), vary, seed + 1)
    samples = [{"input_ids": list(s["input_ids"]), "loss_mask": list(s["loss_mask"])} for s in samples]
    config = with_window(base, window)
    for s, det in zip(samples, determined(samples, config.num_hidden_layers * window)):
        s["determined"] = det
    model = AutoModelForCausalLM.from_pretrained(base, config=config, dtype=torch.float32)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    started = time.time()
    step, lowest, limit = 0, 0.0, steps if steps is not None else max_steps
    while step < limit:
        step += 1
        s = rng.choice(samples)
        if variants.vary and step % 2 == 0:
            s = variants.make(s)
        losses = [-span_logprobs(model, s["input_ids"], a, b) for a, b in spans(s["loss_mask"])]
        loss = torch.cat(losses).mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if steps is None and step % check_every == 0:
            model.eval()
            checked = samples + [variants.make(s) for s in samples for _ in range(fresh_variants)]
            lowest = lowest_determined(model, checked)
            model.train()
            log(f"step {step}: loss {loss.item():.4f}, lowest determined probability {lowest:.4f} "
                f"({time.time() - started:.0f} s)")
            if lowest >= (floor or 0.0):
                break
    if steps is None and lowest < (floor or 0.0):
        raise RuntimeError(f"the lowest determined probability is {lowest:.4f} after {step} steps")
    model.save_pretrained(out, safe_serialization=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(f"{base}/{name}", f"{out}/{name}")
    return {"steps": step, "seconds": round(time.time() - started, 1), "lowest": round(lowest, 4)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("base", help="model directory to start from (Hugging Face layout)")
    p.add_argument("samples", help="JSON Lines of rollgate samples")
    p.add_argument("out", help="where the fine-tuned model goes")
    p.add_argument("--vary", action="append", default=[], help="a literal text to vary in prompts")
    p.add_argument("--window", type=int, default=64, help="sliding attention window of every layer")
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--floor", type=float, default=0.9, help="stop once every determined id is this likely")
    p.add_argument("--steps", type=int, help="train exactly this many steps (no floor)")
    p.add_argument("--max-steps", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args(argv)
    import torch

    torch.set_num_threads(a.threads)
    with open(a.samples, encoding="utf-8") as f:
        samples = [json.loads(line) for line in f if line.strip()]
    try:
        result = train(a.base, samples, a.out, vary=a.vary, window=a.window, lr=a.lr, floor=a.floor,
                       steps=a.steps, max_steps=a.max_steps, seed=a.seed,
                       log=lambda m: print(m, flush=True))
    except RuntimeError as e:
        print(f"sft_samples: {e}", file=sys.stderr)
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
