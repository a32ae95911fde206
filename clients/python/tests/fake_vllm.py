"""TEST DOUBLE: a tiny stand-in for vLLM's OpenAI-compatible ``POST /v1/completions``.

It answers a token-id prompt with a fixed reply in vLLM's documented completion shape:
``choices[0].token_ids`` / ``prompt_token_ids`` (when ``return_token_ids``), ``logprobs`` with
``tokens`` (``"token_id:<n>"`` when ``return_tokens_as_token_ids``), ``token_logprobs``,
``top_logprobs``, ``text_offset``, and ``finish_reason`` ``"length"`` when ``max_tokens`` cut the
reply, and lists ``model`` at ``GET /v1/models``. It records every completion request body.
``mode="old"`` omits ``token_ids`` (vLLM before 0.10.2); ``mode="error"`` answers 500 with
vLLM's error body.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# Texts of the ids the tests use (for the "text" field only; the client never reads it).
_TEXT = {9707: "Hello", 13048: "Hi", 151645: ""}


class FakeVLLM:
    def __init__(
        self, reply: list[int], logprobs: list[float] | None = None, mode: str = "new", model: str = "fake-model",
    ) -> None:
        self.reply = list(reply)
        self.model = model
        self.logprobs = list(logprobs) if logprobs is not None else [-0.125 * (i + 1) for i in range(len(reply))]
        self.mode = mode
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # noqa: N802
                if self.path != "/v1/models":
                    return self._send(404, {"error": {"message": f"no route {self.path}", "type": "NotFoundError", "code": 404}})
                self._send(200, {"object": "list", "data": [{"id": fake.model, "object": "model", "owned_by": "vllm"}]})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                if self.path != "/v1/completions":
                    return self._send(404, {"error": {"message": f"no route {self.path}", "type": "NotFoundError", "code": 404}})
                fake.requests.append(body)
                if fake.mode == "error":
                    return self._send(500, {"error": {"message": "CUDA out of memory", "type": "InternalServerError", "param": None, "code": 500}})
                self._send(200, fake.answer(body))

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        # A short poll interval: shutdown() (called from the test's event loop) returns at once.
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def __enter__(self) -> "FakeVLLM":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = body["prompt"]
        assert isinstance(prompt, list) and all(isinstance(i, int) for i in prompt), "prompt must be token ids"
        n = min(len(self.reply), int(body.get("max_tokens") or 16))
        ids, lps = self.reply[:n], self.logprobs[:n]
        stop_ids = set(body.get("stop_token_ids") or [])
        finish, stop_reason = ("stop", ids[-1]) if ids and ids[-1] in stop_ids else ("length", None)
        as_ids = bool(body.get("return_tokens_as_token_ids"))
        tokens = [f"token_id:{i}" if as_ids else _TEXT.get(i, "?") for i in ids]
        offsets, pos = [], 0
        for i in ids:
            offsets.append(pos)
            pos += len(_TEXT.get(i, ""))
        choice: dict[str, Any] = {
            "index": 0,
            "text": "".join(_TEXT.get(i, "") for i in ids),
            "logprobs": {
                "text_offset": offsets,
                "token_logprobs": lps,
                "tokens": tokens,
                "top_logprobs": [{t: lp} for t, lp in zip(tokens, lps)],
            },
            "finish_reason": finish,
            "stop_reason": stop_reason,
            "prompt_logprobs": None,
        }
        if body.get("return_token_ids") and self.mode == "new":
            choice["prompt_token_ids"] = prompt
            choice["token_ids"] = ids
        return {
            "id": f"cmpl-fake{len(self.requests)}",
            "object": "text_completion",
            "created": int(time.time()),
            "model": body.get("model"),
            "choices": [choice],
            "usage": {"prompt_tokens": len(prompt), "completion_tokens": len(ids), "total_tokens": len(prompt) + len(ids)},
        }
