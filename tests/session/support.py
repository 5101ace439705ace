"""How the session tests open a session: on the loopback emulator, with no user skills, every
tool call allowed (the headless bridge), as the commands open one; and the recorded messages
they write into session files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop.emulator import Emulator
from desktop.host.permissions import headless_bridge
from desktop.host.settings import Settings
from desktop.pi.routes import emulator_route
from desktop.session.assembly import OpenSession, SessionConfig, open_session


def config(
    emu: Emulator, workspace: Path, model: str = "anthropic/claude-opus-5-5", **fields: Any
) -> SessionConfig:
    """``model`` on ``emu`` in ``workspace`` (made if missing); ``fields`` add to the config."""
    workspace.mkdir(parents=True, exist_ok=True)
    fields.setdefault("settings", Settings())
    return SessionConfig(
        route=emulator_route(model, emu.url, emulated=True),
        workspace=workspace,
        user_skills=workspace / "no-user-skills",
        **fields,
    )


def open_(path: Path, cfg: SessionConfig, **options: Any) -> OpenSession:
    return open_session(path, cfg, bridge=headless_bridge(yes=True, no=False), **options)


#: The route an assistant row of a journal names.
OPUS = {"provider": "anthropic", "model": "claude-opus-5-5", "api": "anthropic-messages", "baseUrl": "x"}


def reply(
    content: list[dict[str, Any]],
    ts: int,
    *,
    stop: str = "toolUse",
    route: dict[str, Any] = OPUS,
    **usage: int,
) -> dict[str, Any]:
    """An assistant message as pi-ai records it; ``usage`` figures not given are 0, cost 0."""
    figures = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, **usage}
    return {
        "role": "assistant",
        "content": content,
        "api": route["api"],
        "provider": route["provider"],
        "model": route["model"],
        "usage": {
            **figures,
            "totalTokens": sum(figures.values()),
            "cost": dict.fromkeys([*figures, "total"], 0),
        },
        "stopReason": stop,
        "timestamp": ts,
    }


def tool_result(call_id: str, name: str, text: str, ts: int, **details: Any) -> dict[str, Any]:
    """A successful tool result message; ``details`` as the tool recorded them, when any."""
    result: dict[str, Any] = {"role": "toolResult", "toolCallId": call_id, "toolName": name}
    result["content"] = [{"type": "text", "text": text}]
    if details:
        result["details"] = details
    return {**result, "isError": False, "timestamp": ts}
