"""Test plumbing: a REAL rollgate gateway as a subprocess, an agent played with ``http.client``,
and Qwen3 token ids for the replies the tests send.

The gateway is ``<repo>/main.ts serve`` run by ``<repo>/node_modules/.bin/deno`` on a free
loopback port. Tests that need it call ``gateway()`` (one shared process, started on first use
and stopped at exit) or ``start_gateway(env=...)`` for a dedicated one. Without deno they skip.
"""

from __future__ import annotations

import atexit
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

CLIENT_DIR = Path(__file__).resolve().parent.parent  # clients/python
ROOT = CLIENT_DIR.parent.parent  # the repository
DENO = ROOT / "node_modules" / ".bin" / "deno"
EXAMPLES = CLIENT_DIR / "examples"

if str(CLIENT_DIR) not in sys.path:
    sys.path.insert(0, str(CLIENT_DIR))

# Real Qwen3 ids (tokenized with the gateway's own tokenizer, tokenizer.json of Qwen3).
IM_END = 151645
HELLO = [9707, IM_END]  # "Hello<|im_end|>"
HI = [13048, IM_END]  # "Hi<|im_end|>"
THINK_HELLO = [151667, 198, 32, 198, 151668, 271, 9707, IM_END]  # "<think>\nA\n</think>\n\nHello<|im_end|>"
# '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>'
TOOL_CALL_WEATHER = [
    151657, 198, 4913, 606, 788, 330, 455, 69364, 497, 330,
    16370, 788, 5212, 8926, 788, 330, 59604, 95642, 151658, IM_END,
]
SUNNY = [50, 27297, 304, 12095, 13, IM_END]  # "Sunny in Paris.<|im_end|>"

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def logprobs_for(ids: list[int]) -> list[float]:
    """Deterministic, distinct logprobs for test completions."""
    return [-round((i % 7 + 1) / 100, 2) for i in range(len(ids))]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """Linux: the gateway gets SIGTERM if the test process dies without cleaning up."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001
        pass


@dataclass
class GatewayProcess:
    url: str
    port: int
    proc: subprocess.Popen
    log_path: str
    env: dict[str, str] = field(default_factory=dict)
    #: The journal's temporary data directory (removed by ``stop``), when the test made one.
    data_dir: str | None = None

    def output(self) -> str:
        try:
            return Path(self.log_path).read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        try:
            os.unlink(self.log_path)
        except OSError:
            pass
        if self.data_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)


def skip(group: str, reason: str) -> unittest.SkipTest:
    """A skipped test group, recorded for the last line of ``npm test`` (ROLLGATE_SKIP_LOG)."""
    log = os.environ.get("ROLLGATE_SKIP_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"group": group, "reason": reason}) + "\n")
    return unittest.SkipTest(reason)


def require_deno() -> None:
    if not os.access(DENO, os.X_OK):
        raise skip(
            "Python client against a gateway",
            f"deno not found at {DENO}: run `npm ci` at the repository root to test against a real gateway",
        )


def start_gateway(
    env: dict[str, str] | None = None, timeout: float = 60.0, args: list[str] | None = None
) -> GatewayProcess:
    """Starts ``main.ts serve [args]`` on a free port and waits for ``/ready`` (the model loaded,
    the journal restored). It journals into a temporary data directory of its own unless
    ``args`` name one or turn the journal off."""
    require_deno()
    port = free_port()
    args = list(args or [])
    data_dir = None
    if "--data-dir" not in args and "--no-journal" not in args:
        data_dir = tempfile.mkdtemp(prefix="rollgate-data-")
        args += ["--data-dir", data_dir]
    log = tempfile.NamedTemporaryFile(prefix="rollgate-gw-", suffix=".log", delete=False)
    # Only what this test asks for: no ROLLGATE_* settings leak in from the caller's environment.
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("ROLLGATE_")}
    child_env.update({"NO_COLOR": "1", **(env or {})})
    proc = subprocess.Popen(
        [
            str(DENO), "run", "-A", str(ROOT / "main.ts"), "serve",
            "--port", str(port), "--host", "127.0.0.1", *args,
        ],
        cwd=str(ROOT),
        env=child_env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        # PDEATHSIG follows the forking *thread*: only tie the gateway to the main thread.
        preexec_fn=_die_with_parent
        if sys.platform.startswith("linux") and threading.current_thread() is threading.main_thread()
        else None,
    )
    log.close()
    gw = GatewayProcess(f"http://127.0.0.1:{port}", port, proc, log.name, env or {}, data_dir)
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            out = gw.output()
            gw.stop()
            raise RuntimeError(f"the gateway exited with {proc.returncode}:\n{out}")
        try:
            with urllib.request.urlopen(gw.url + "/ready", timeout=1) as r:
                if r.status == 200:
                    return gw
        except OSError:
            pass
        if time.monotonic() > deadline:
            out = gw.output()
            gw.stop()
            raise RuntimeError(f"the gateway did not start within {timeout}s:\n{out}")
        time.sleep(0.1)


_shared: GatewayProcess | None = None


def gateway() -> GatewayProcess:
    """The shared gateway (no admin token), started on first use, stopped at exit."""
    global _shared
    if _shared is None or _shared.proc.poll() is not None:
        _shared = start_gateway()
        atexit.register(_shared.stop)
    return _shared


# -- the agent: plain http.client -------------------------------------------------------------------


@dataclass
class AgentAnswer:
    status: int
    body: Any = None  # JSON body (stream false, or an error)
    content: str = ""
    reasoning: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    events: list[Any] = field(default_factory=list)  # SSE data payloads (stream true)
    error: Any = None  # in-stream error event, if any


def chat(
    base_url: str,
    messages: list[dict[str, Any]],
    *,
    stream: bool = False,
    tools: list[dict[str, Any]] | None = None,
    token: str | None = None,
    timeout: float = 60.0,
    **extra: Any,
) -> AgentAnswer:
    """``POST <base_url>/v1/chat/completions`` as an agent would; parses JSON or SSE."""
    parts = urlsplit(base_url)
    body: dict[str, Any] = {"model": "policy", "messages": messages, "stream": stream, **extra}
    if tools:
        body["tools"] = tools
    if stream:
        body.setdefault("stream_options", {"include_usage": True})
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.request("POST", parts.path.rstrip("/") + "/v1/chat/completions", json.dumps(body), headers)
        resp = conn.getresponse()
        ctype = resp.getheader("content-type", "")
        if not ctype.startswith("text/event-stream"):
            raw = resp.read()
            data = json.loads(raw) if raw else None
            ans = AgentAnswer(resp.status, data)
            if resp.status == 200 and data:
                choice = data["choices"][0]
                msg = choice["message"]
                ans.content = msg.get("content") or ""
                ans.reasoning = msg.get("reasoning_content") or ""
                ans.tool_calls = msg.get("tool_calls") or []
                ans.finish_reason = choice.get("finish_reason")
                ans.usage = data.get("usage")
            return ans
        ans = AgentAnswer(resp.status)
        calls: dict[int, dict[str, Any]] = {}
        for line in resp:
            line = line.rstrip(b"\r\n")
            if not line.startswith(b"data:"):
                continue
            payload = line[5:].strip()
            if payload == b"[DONE]":
                break
            ev = json.loads(payload)
            ans.events.append(ev)
            if "error" in ev:
                ans.error = ev["error"]
                continue
            if ev.get("usage"):
                ans.usage = ev["usage"]
            for choice in ev.get("choices", []):
                delta = choice.get("delta", {})
                ans.content += delta.get("content") or ""
                ans.reasoning += delta.get("reasoning_content") or ""
                for tc in delta.get("tool_calls") or []:
                    slot = calls.setdefault(tc["index"], {"id": None, "function": {"name": "", "arguments": ""}})
                    if tc.get("id"):
                        slot["id"] = tc["id"]
                    fn = tc.get("function") or {}
                    slot["function"]["name"] += fn.get("name") or ""
                    slot["function"]["arguments"] += fn.get("arguments") or ""
                if choice.get("finish_reason"):
                    ans.finish_reason = choice["finish_reason"]
        ans.tool_calls = [calls[i] for i in sorted(calls)]
        return ans
    finally:
        conn.close()


def api(url: str, method: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
    """A raw trainer-API call with urllib (for checks independent of the client)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            raw = r.read()
            return r.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as e:
        raw = e.read()
        return e.code, json.loads(raw) if raw else None


def load_example(name: str):
    """Imports ``examples/<name>.py`` as a module."""
    import importlib.util

    if str(EXAMPLES) not in sys.path:
        sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
