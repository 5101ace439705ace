"""HTTP clients for the provider APIs (network I/O lives in the host layer).

The names below load on first use (PEP 562): the HTTP client pulls in httpx and the stream
parsers, which a command that sends nothing (``pi-desktop status``) should not pay for.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from desktop.host.providers.auth import auth_headers
    from desktop.host.providers.client import Timeouts, send_streaming
    from desktop.host.providers.request import WireRequest
    from desktop.host.providers.retry import RetryPolicy

_WHERE = {
    "auth_headers": "auth",
    "Timeouts": "client",
    "send_streaming": "client",
    "WireRequest": "request",
    "RetryPolicy": "retry",
}

__all__ = [
    "RetryPolicy",
    "Timeouts",
    "WireRequest",
    "auth_headers",
    "send_streaming",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
