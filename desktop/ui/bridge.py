"""The Host's permission bridge for the window: asks the GUI by signal, waits for the answer.

``request_permission`` runs on the worker thread and blocks it (the turn is paused there
anyway); ``answer`` is called from the GUI thread through a direct connection and only stores
the answer and sets an event. A stop (the worker's cancel event) ends the wait with a denial.
"""

from __future__ import annotations

import itertools
import threading

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

    def request_permission(self, request: PermissionRequest) -> PermissionAnswer:
        request_id = next(self._ids)
        done = threading.Event()
        answers: list[tuple[bool, bool]] = []
        with self._lock:
            self._waiting[request_id] = (done, answers)
        self.asked.emit(
            request_id,
            {
                "tool": request.tool_name,
                "toolCallId": request.tool_call_id,
                "effect": str(request.effect),
                "arguments": dict(request.arguments),
                "summary": request.summary,
                "mode": request.mode.value,
            },
        )
        try:
            while not done.wait(0.05):
                if self.cancel.is_set():
                    return PermissionAnswer(False, "the turn was stopped before an answer")
            allowed, remember = answers[0]
            return PermissionAnswer(
                bool(allowed), "" if allowed else "denied in the permission dialog", bool(remember)
            )
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
