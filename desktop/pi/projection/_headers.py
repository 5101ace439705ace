"""Request headers as pi-ai and its SDKs layer them.

Every SDK merges header layers the same way: names compare case-insensitively, a later layer
wins, and a ``None`` value removes the header (even one an earlier layer such as the SDK's own
auth set). pi-ai adds a few headers of its own on top: OpenCode's session routing header
(a provider-level wrapper), GitHub Copilot's initiator/intent/vision headers, and its
``User-Agent``.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from desktop.pi.projection import ProjectionError

HeaderLayer = Mapping[str, str | None] | None

OPENCODE_SESSION_HEADER = "x-opencode-session"
#: pi-ai wraps these providers' APIs with ``withOpenCodeSessionHeader`` (``providers/opencode*.ts``).
_OPENCODE_APIS = {
    "opencode": frozenset(
        {"anthropic-messages", "google-generative-ai", "openai-completions", "openai-responses"}
    ),
    "opencode-go": frozenset({"anthropic-messages", "openai-completions", "openai-responses"}),
}


def merge_headers(*layers: HeaderLayer) -> dict[str, str]:
    """Merge header layers into lower-case names; later layers win and ``None`` deletes."""
    merged: dict[str, str] = {}
    for layer in layers:
        if not layer:
            continue
        for name, value in layer.items():
            key = name.lower()
            merged.pop(key, None)
            if value is not None:
                merged[key] = str(value)
    return merged


def has_header(headers: HeaderLayer, name: str) -> bool:
    """Whether ``name`` is set (any letter case) to a non-blank value."""
    wanted = name.lower()
    return any(
        key.lower() == wanted and value is not None and value.strip()
        for key, value in (headers or {}).items()
    )


def last_header_value(layers: Iterable[HeaderLayer], name: str) -> tuple[bool, str | None]:
    """(found, value) of the last occurrence of ``name`` across ``layers``; the value may be None."""
    found, value = False, None
    wanted = name.lower()
    for layer in layers:
        for key, candidate in (layer or {}).items():
            if key.lower() == wanted:
                found, value = True, candidate
    return found, value


def client_api_key(provider: str, api_key: str | None, headers: HeaderLayer) -> str:
    """The OpenAI SDK needs a key; an explicit Authorization header makes a placeholder do."""
    if api_key:
        return api_key
    if has_header(headers, "authorization") or has_header(headers, "cf-aig-authorization"):
        return "unused"
    raise ProjectionError(
        f"No API key for provider: {provider}; pass RequestOptions.api_key (pi-ai options.apiKey) or an Authorization header"
    )


def with_opencode_session_header(
    provider: str, api: str, session_id: str | None, headers: Mapping[str, str | None]
) -> Mapping[str, str | None]:
    """OpenCode routes a conversation by ``x-opencode-session`` unless the caller set it already."""
    if not session_id or api not in _OPENCODE_APIS.get(provider, ()):
        return headers
    if any(name.lower() == OPENCODE_SESSION_HEADER for name in headers):
        return headers
    return {**headers, OPENCODE_SESSION_HEADER: session_id}


def copilot_headers(messages: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """pi-ai ``buildCopilotDynamicHeaders``: who initiated the turn, and whether images ride along."""
    last = messages[-1] if messages else None
    headers = {
        "X-Initiator": "agent" if last is not None and last["role"] != "user" else "user",
        "Openai-Intent": "conversation-edits",
    }
    for message in messages:
        content = message.get("content")
        if (
            message["role"] in ("user", "toolResult")
            and isinstance(content, list)
            and any(block.get("type") == "image" for block in content)
        ):
            headers["Copilot-Vision-Request"] = "true"
            break
    return headers


@lru_cache(maxsize=1)
def pi_user_agent() -> str:
    """pi-ai's ``User-Agent``: ``pi (<node platform> <os release>; <node arch>)``."""
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "i386": "ia32", "i686": "ia32"}.get(
        machine, machine
    )
    release = platform.version() if sys.platform == "win32" else platform.release()
    return f"pi ({sys.platform} {release}; {arch})"
