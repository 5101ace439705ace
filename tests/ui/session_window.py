"""A real window on a real worker thread, driven as a user would, for the session-state tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop.emulator import Emulator
from desktop.ui.main_window import MainWindow
from desktop.ui.worker import start_worker, stop_worker

TURN_TIMEOUT = 30_000


class Window:
    def __init__(self, qtbot: Any, workspace: Path, emulator: Emulator) -> None:
        self.qtbot = qtbot
        self.thread, self.worker, self.client = start_worker(
            workspace=str(workspace), offline=True, emulator=emulator
        )
        self.window = MainWindow(self.worker, self.client)
        qtbot.addWidget(self.window)

    def start(self, **options: Any) -> None:
        self.window.show()
        self.qtbot.waitExposed(self.window)
        self.client.start.emit({"firstRun": False, **options})
        self.wait_open()

    def wait_open(self, path: Path | None = None) -> None:
        def opened() -> bool:
            session, status = self.window.session, self.window.status
            if not session or not status or status.get("path") != session.get("path"):
                return False
            return path is None or Path(session["path"]) == path

        self.qtbot.waitUntil(opened, timeout=TURN_TIMEOUT)

    def toolbar(self) -> tuple[str, str, str]:
        w = self.window
        return (
            str(w.route_combo.currentData()),
            w.mode_combo.currentText(),
            str(w.fallback_combo.currentData()),
        )

    def send(self, text: str) -> dict[str, Any]:
        count = len(self.window.turn_results)
        self.window.send(text)
        self.qtbot.waitUntil(lambda: len(self.window.turn_results) > count, timeout=TURN_TIMEOUT)
        return self.window.turn_results[-1]

    def settle(self) -> None:
        """Let every queued worker answer reach the window (status, activation, previews)."""
        done: list[bool] = []
        self.client.ops.query(lambda _w: None, lambda _r: done.append(True))
        self.qtbot.waitUntil(lambda: bool(done), timeout=TURN_TIMEOUT)

    def close(self) -> None:
        self.window.close()
        assert stop_worker(self.thread, self.worker, self.client)
