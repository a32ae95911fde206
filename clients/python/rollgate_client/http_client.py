"""Which HTTP transport a client gets: ``httpx`` when it is importable, else the standard-library
transport (``transport.py``). Kept apart from both so that neither imports the other."""

from __future__ import annotations

import os
from typing import Any

from .transport import AsyncHTTPClient


def open_http_client(base_url: str, **options: Any) -> Any:
    """An HTTP client for ``base_url``: on ``httpx`` when it is importable, else the
    standard-library transport. ``ROLLGATE_CLIENT_TRANSPORT=builtin`` (or ``httpx``) forces one."""
    choice = os.environ.get("ROLLGATE_CLIENT_TRANSPORT", "")
    if choice != "builtin":
        try:
            from .httpx_transport import HttpxHTTPClient
        except ImportError:
            if choice == "httpx":
                raise
        else:
            return HttpxHTTPClient(base_url, **options)
    return AsyncHTTPClient(base_url, **options)
