"""HTTP clients for the provider APIs (network I/O lives in the host layer)."""

from desktop.host.providers.auth import auth_headers, with_auth
from desktop.host.providers.client import DEFAULT_TIMEOUTS, Timeouts, send_streaming
from desktop.host.providers.request import ProjectedRequest, WireRequest
from desktop.host.providers.retry import DEFAULT_RETRY, RetryPolicy

__all__ = [
    "DEFAULT_RETRY",
    "DEFAULT_TIMEOUTS",
    "ProjectedRequest",
    "RetryPolicy",
    "Timeouts",
    "WireRequest",
    "auth_headers",
    "send_streaming",
    "with_auth",
]
