"""Sending requests to the loopback emulator with the Host's HTTP client, and pricing them."""

from __future__ import annotations

import atexit
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import httpx

from desktop.bench.accounting import RequestFigures, figures
from desktop.host.providers.client import send_streaming
from desktop.host.providers.request import WireRequest
from desktop.pi.projection import ProviderRequest
from desktop.pi.types import AssistantMessage, Model
from desktop.session.dispatch import with_credential


@dataclass(frozen=True)
class Sent:
    body: bytes
    figures: RequestFigures


_HTTP: httpx.Client | None = None


def http_client() -> httpx.Client:
    """One client for the whole run: building one per request loads the CA store each time
    (about 50 ms), which would dominate a loopback benchmark. Still no connection pooling."""
    global _HTTP
    if _HTTP is None:
        _HTTP = httpx.Client(limits=httpx.Limits(max_keepalive_connections=0), follow_redirects=False)
        atexit.register(_HTTP.close)
    return _HTTP


def send(request: ProviderRequest | WireRequest, model: Model, on_event: Any = None) -> AssistantMessage:
    """Send one request over loopback with the Host client; the final message (fails loudly)."""
    wire = (
        request
        if isinstance(request, WireRequest)
        else WireRequest(
            url=request.url, body=request.body_bytes, headers=with_credential(request.headers, None)
        )
    )
    message = send_streaming(wire, model=model, on_event=on_event, client=http_client())
    if message["stopReason"] in ("error", "aborted"):
        raise RuntimeError(f"benchmark request failed: {message.get('errorMessage')}")
    return cast(AssistantMessage, message)


def measure(requests: Sequence[ProviderRequest | WireRequest], model: Model) -> list[Sent]:
    """Send requests in order (to the cache state the caller prepared) and price each one."""
    out = []
    for request in requests:
        usage = send(request, model)["usage"]
        body = request.body if isinstance(request, WireRequest) else request.body_bytes
        out.append(Sent(body, figures(model, usage)))
    return out
