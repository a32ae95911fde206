"""Python trainer client for rollgate (asyncio): on ``httpx`` when it is importable, else on its
own standard-library HTTP transport.

See ``clients/python/README.md``.
"""

import logging as _logging

from .client import Handler, RollgateClient
from .schema import (
    Completion,
    GatewayStatus,
    PendingRequest,
    Rollout,
    RollgateError,
    Sample,
    ServeStats,
)
from .transport import AsyncHTTPClient, HTTPResponse
from .tree import expand_compact_tree
from .sample_forms import expand_calls, expand_tree, routed_experts_rows
from .groups import group_advantages, rollout_rewards, sample_advantages
from .teacher import TeacherRequest, next_teacher_request, serve_teacher_requests

__version__ = "0.1.0"

# A library logs, the application decides where it goes (``logging.basicConfig`` shows it).
_logging.getLogger("rollgate_client").addHandler(_logging.NullHandler())

__all__ = [
    "AsyncHTTPClient",
    "Completion",
    "GatewayStatus",
    "Handler",
    "HTTPResponse",
    "PendingRequest",
    "Rollout",
    "RollgateClient",
    "RollgateError",
    "Sample",
    "ServeStats",
    "TeacherRequest",
    "expand_calls",
    "expand_compact_tree",
    "expand_tree",
    "group_advantages",
    "next_teacher_request",
    "rollout_rewards",
    "routed_experts_rows",
    "sample_advantages",
    "serve_teacher_requests",
]
