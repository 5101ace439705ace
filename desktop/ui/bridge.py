"""The Host's permission bridge for the window: asks the GUI by signal, waits for the answer.

``request_permission`` runs on the worker thread and blocks it (the turn is paused there
anyway); ``answer`` is called from the GUI thread through a direct connection and only stores
the answer and sets an event. A stop (the worker's cancel event) ends the wait with a denial.
"""

from __future__ import annotations

import difflib
import itertools
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from desktop.host.permissions import PermissionAnswer, PermissionRequest


class QtPermissionBridge(QObject):
    asked = Signal(int, object)
    """(request id, a plain dict describing the request)"""

    def __init__(self, cancel: threading.Event) -> None:
        super().__init__()
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._waiting: dict[int, tuple[threading.Event, list[tuple[bool, bool]]]] = {}
        self.cancel = cancel
        #: The open session's workspace: the prompt names it, and relative paths resolve in it.
        self.workspace = ""

    questioned = Signal(int, object)
    """(request id, {"title", "text"}): a yes/no question that is not about a tool call (a
    session's recorded folder, a repository's command); answered through ``answer`` too."""

    def request_permission(self, request: PermissionRequest) -> PermissionAnswer:
        info = {
            "tool": request.tool_name,
            "toolCallId": request.tool_call_id,
            "effect": str(request.effect),
            "arguments": dict(request.arguments),
            "summary": request.summary,
            "mode": request.mode.value,
            "cwd": self.workspace,
            "diff": change_diff(request.tool_name, request.arguments, self.workspace),
        }
        answer = self._wait(self.asked, info, self.cancel)
        if answer is None:
            return PermissionAnswer(False, "the turn was stopped before an answer")
        allowed, remember = answer
        return PermissionAnswer(
            bool(allowed), "" if allowed else "denied in the permission dialog", bool(remember)
        )

    def ask(self, title: str, text: str, stop: threading.Event) -> bool:
        """Ask the user a yes/no question from the worker thread; ``stop`` (the app closing)
        answers no. Nothing is granted without the answer (designs A10 and A11)."""
        answer = self._wait(self.questioned, {"title": title, "text": text}, stop)
        return answer is not None and bool(answer[0])

    def _wait(self, signal: Any, info: dict[str, Any], stop: threading.Event) -> tuple[bool, bool] | None:
        request_id = next(self._ids)
        done = threading.Event()
        answers: list[tuple[bool, bool]] = []
        with self._lock:
            self._waiting[request_id] = (done, answers)
        signal.emit(request_id, info)
        try:
            while not done.wait(0.05):
                if stop.is_set():
                    return None
            return answers[0]
        finally:
            with self._lock:
                self._waiting.pop(request_id, None)

    @Slot(int, bool, bool)
    def answer(self, request_id: int, allowed: bool, remember: bool) -> None:
        with self._lock:
            waiting = self._waiting.get(request_id)
            if waiting is None:
                return
            waiting[1].append((allowed, remember))
            waiting[0].set()


#: A file larger than this is not read for the prompt's diff (its new content is still shown).
DIFF_READ_LIMIT = 1_000_000


def _current_text(path: str, workspace: str) -> str | None:
    """The file's text now; None when it does not exist, is too large or is not text."""
    target = Path(path) if Path(path).is_absolute() or not workspace else Path(workspace) / path
    try:
        if not target.is_file() or target.stat().st_size > DIFF_READ_LIMIT:
            return None
        return target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def edit_pairs(arguments: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The (old, new) replacements of an ``edit`` call, in the current and the legacy shape."""
    pairs = [
        (str(e.get("oldText", "")), str(e.get("newText", "")))
        for e in arguments.get("edits") or ()
        if isinstance(e, Mapping)
    ]
    if "oldText" in arguments:
        pairs.append((str(arguments.get("oldText", "")), str(arguments.get("newText", ""))))
    return pairs


def change_diff(tool: str, arguments: Mapping[str, Any], workspace: str) -> str:
    """The unified diff a ``write`` or ``edit`` call would make, for the permission prompt (G7).

    Runs on the worker thread (it reads the file). ``write`` compares with the file as it is now
    (a new file is all additions); ``edit`` applies each replacement to the current text when it
    matches, else shows the replacements themselves. Other tools have no diff ("").
    """
    path = str(arguments.get("path", "") or "")
    if tool not in ("write", "edit") or not path:
        return ""
    current = _current_text(path, workspace)
    if tool == "write":
        return unified_diff(path, current or "", str(arguments.get("content", "")), created=current is None)
    pairs = edit_pairs(arguments)
    if current is not None and pairs and all(old in current for old, _new in pairs):
        updated = current
        for old, new in pairs:
            updated = updated.replace(old, new, 1)
        return unified_diff(path, current, updated)
    return "\n".join(unified_diff(path, old, new) for old, new in pairs)


def unified_diff(path: str, old: str, new: str, *, created: bool = False) -> str:
    """One replacement as a unified diff, as the permission prompt and the Message tab show it."""
    lines = difflib.unified_diff(
        old.splitlines(),
        new.splitlines(),
        "/dev/null" if created else f"a/{path}",
        f"b/{path}",
        lineterm="",
    )
    return "\n".join(lines)
