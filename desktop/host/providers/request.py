"""The projected request the client sends: method, URL, headers and exact body bytes.

Projections (``desktop.pi.projection``) build these without credentials so that previews
never hold a key; the client adds the account's auth header just before sending.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

#: Authenticates a request just before an attempt: (method, url, headers, body) -> the headers to
#: send. SigV4 signs the exact bytes; ADC adds a fresh bearer token. Raises ``AuthUnavailable``.
RequestAuthorizer = Callable[[str, str, Mapping[str, str], bytes], dict[str, str]]


class ProjectedRequest(Protocol):
    """Anything with these four attributes can be sent (the projection's own type included)."""

    @property
    def method(self) -> str: ...
    @property
    def url(self) -> str: ...
    @property
    def headers(self) -> Mapping[str, str]: ...
    @property
    def body(self) -> bytes: ...


@dataclass(frozen=True)
class WireRequest:
    url: str
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    method: str = "POST"
