"""Permission modes and the permission bridge: who may run what, and who is asked.

The mode decides per effect class; ``ask`` decisions go to a ``PermissionBridge``. The
desktop window implements the bridge with signals (the worker thread blocks until the GUI
answers); the command line uses ``HeadlessBridge``, answering from ``--yes``/``--no``.
"""

from __future__ import annotations

import enum
import threading
from typing import Literal, NamedTuple, Protocol

from desktop.host.tools.types import Effect, JsonObject

Decision = Literal["allow", "ask", "deny"]


class PermissionMode(enum.StrEnum):
    ASK = "ask"
    ACCEPT_EDITS = "accept-edits"
    READ_ONLY = "read-only"
    FULL_ACCESS = "full-access"

    @classmethod
    def parse(cls, value: str) -> PermissionMode:
        try:
            return cls(value)
        except ValueError:
            choices = ", ".join(mode.value for mode in cls)
            raise ValueError(f"unknown permission mode {value!r}; choose one of: {choices}") from None


_EFFECT_WORDS = {"write": "file changes", "execute": "commands", "external": "external tools"}


def decide(mode: PermissionMode, effect: Effect, *, read_only_tool: bool = False) -> tuple[Decision, str]:
    """The mode's verdict for one effect class, with the reason shown on refusal."""
    if effect == "read" or (read_only_tool and effect == "external"):
        return "allow", "reads are always allowed"
    if mode is PermissionMode.FULL_ACCESS:
        return "allow", "full access mode"
    if mode is PermissionMode.READ_ONLY:
        return "deny", f"read-only mode does not allow {_EFFECT_WORDS[effect]}; switch the mode to allow it"
    if mode is PermissionMode.ACCEPT_EDITS and effect == "write":
        return "allow", "accept-edits mode allows file changes in the workspace"
    return "ask", f"{mode.value} mode asks before {_EFFECT_WORDS[effect]}"


class PermissionRequest(NamedTuple):
    tool_call_id: str
    tool_name: str
    effect: Effect
    arguments: JsonObject
    summary: str
    mode: PermissionMode


class PermissionAnswer(NamedTuple):
    allowed: bool
    reason: str = ""
    remember_for_session: bool = False


class PermissionBridge(Protocol):
    """Answers approval questions; called on the worker thread, may block until answered."""

    def request_permission(self, request: PermissionRequest) -> PermissionAnswer: ...


class HeadlessBridge:
    """Answers every question the same way (``--yes`` / ``--no``) and keeps a log of them."""

    def __init__(self, answer: bool, reason: str = "") -> None:
        self.answer = answer
        self.reason = reason or ("approved by --yes" if answer else "denied by --no (headless run)")
        self.asked: list[PermissionRequest] = []
        self._lock = threading.Lock()

    def request_permission(self, request: PermissionRequest) -> PermissionAnswer:
        with self._lock:
            self.asked.append(request)
        return PermissionAnswer(self.answer, self.reason)


def headless_bridge(*, yes: bool, no: bool) -> HeadlessBridge:
    """The bridge for ``--yes`` / ``--no``; with neither, a headless run declines (nobody to ask)."""
    if yes and no:
        raise ValueError("--yes and --no contradict each other; pass at most one")
    if yes:
        return HeadlessBridge(True)
    return HeadlessBridge(
        False, "denied: no one to ask in a headless run (pass --yes to approve)" if not no else ""
    )
