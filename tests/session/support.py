"""How the session tests open a session: on the loopback emulator, with no user skills, every
tool call allowed (the headless bridge), as the commands open one."""

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
