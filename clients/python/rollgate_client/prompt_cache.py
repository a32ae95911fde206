"""The prompts a trainer keeps so the gateway can hand it deltas (``GET /api/requests/next?prompt=delta``).

A turn's prompt is its parent turn's prompt and output, then a few new ids. Once a request of a
chain is completed, this keeps that request's prompt and output (``array('i')``: 4 bytes an id);
the next request of the chain comes as ``prompt_base`` (that request, and how many of its ids) plus
the ids after them, and the whole prompt is rebuilt here. What it does not have (dropped, never
completed here, another client's) the client fetches whole (``GET /api/requests/:id/prompt``): a
delta is never guessed.

Bounded: one entry per chain (a request's entry replaces the one it extended), at most
``max_ids`` ids in all (least recently used go first), and a rollout's entries go when it is
finished or deleted.
"""

from __future__ import annotations

from array import array
from collections import OrderedDict
from typing import Iterable

__all__ = ["PromptCache", "DEFAULT_MAX_IDS"]

#: 64M ids (256 MB): 500 chains at 128k.
DEFAULT_MAX_IDS = 64 * 1024 * 1024
#: Requests handed out and not completed that are remembered (a caller that never answers some).
MAX_OPEN = 65536


class PromptCache:
    """Completed requests' prompt + output ids, by request id."""

    def __init__(self, max_ids: int = DEFAULT_MAX_IDS) -> None:
        self.max_ids = max_ids
        self._entries: OrderedDict[str, tuple[str, array]] = OrderedDict()
        self._ids = 0
        #: Prompts of requests handed out and not yet completed: request id → (rollout, prompt, base).
        self._open: OrderedDict[str, tuple[str, array, str | None]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def ids(self) -> int:
        """Ids kept."""
        return self._ids

    def rebuild(self, base_id: str, length: int, tail: Iterable[int]) -> array | None:
        """The whole prompt of a delta on ``base_id``'s first ``length`` ids, or None without them."""
        entry = self._entries.get(base_id)
        if entry is None or len(entry[1]) < length:
            return None
        self._entries.move_to_end(base_id)
        prompt = entry[1][:length]
        prompt.extend(tail)
        return prompt

    def opened(self, request_id: str, rollout_id: str, prompt: array, base_id: str | None) -> None:
        """A request was handed out with ``prompt`` (rebuilt on ``base_id``, when a delta)."""
        self._open[request_id] = (rollout_id, prompt, base_id)
        if len(self._open) > MAX_OPEN:
            self._open.popitem(last=False)

    def completed(self, request_id: str, output_ids: Iterable[int]) -> None:
        """The gateway recorded ``output_ids`` for ``request_id``: keep prompt + output."""
        opened = self._open.pop(request_id, None)
        if opened is None:
            return
        rollout_id, prompt, base_id = opened
        if base_id is not None:
            self._drop(base_id)  # the chain goes on from this request
        line = array("i", prompt)
        line.extend(output_ids)
        if len(line) > self.max_ids:
            return
        self._entries[request_id] = (rollout_id, line)
        self._ids += len(line)
        while self._ids > self.max_ids:
            self._drop(next(iter(self._entries)))

    def closed(self, request_id: str) -> None:
        """A request ended without a completion of ours being recorded (failed, withdrawn, lost)."""
        self._open.pop(request_id, None)

    def drop_rollout(self, rollout_id: str) -> None:
        """Forgets a finished or deleted rollout's requests."""
        for rid in [r for r, (ro, _) in self._entries.items() if ro == rollout_id]:
            self._drop(rid)
        for rid in [r for r, (ro, _, _) in self._open.items() if ro == rollout_id]:
            del self._open[rid]

    def clear(self) -> None:
        self._entries.clear()
        self._open.clear()
        self._ids = 0

    def _drop(self, request_id: str) -> None:
        entry = self._entries.pop(request_id, None)
        if entry is not None:
            self._ids -= len(entry[1])
