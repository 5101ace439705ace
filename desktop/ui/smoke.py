"""A hidden self-test of a build: the window opens a session, runs one offline turn with a tool
call, renders the Payload tab, and quits with code 0 (design G13).

Frozen bundles fail in ways the source tree never does (a Qt plugin, a data file or a module
imported by name left out), and most of those failures only show once a session opens or a
request is projected. So ``--smoke-test`` (or ``PI_DESKTOP_SMOKE_EXIT=1``) drives the real
window, the real worker thread and the in-process emulator over its loopback socket, in a
temporary data folder and workspace unless ``--data-dir`` names one, and prints one line per
checkpoint. The first failure, or a checkpoint not reached in time, prints
``smoke-test: failed …`` and exits 1. With a session file given (``pi-desktop --smoke-test
PATH``) it checks that file opens and its next request renders instead of running a turn.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Slot
from PySide6.QtGui import QImage

from desktop.ui.open_files import app_part

if TYPE_CHECKING:  # the launcher asks smoke_requested() before it pays for QtWidgets
    from PySide6.QtWidgets import QApplication

    from desktop.ui.main_window import MainWindow
    from desktop.ui.messages import OpenProblem, Started, TurnFinished
    from desktop.ui.worker import SessionWorker

SMOKE_ENV = "PI_DESKTOP_SMOKE_EXIT"
#: A picture file (format from its suffix: .png) of the window as the self-test left it (CI keeps it).
SCREENSHOT_ENV = "PI_DESKTOP_SMOKE_SCREENSHOT"
SCREENSHOT_SIZE = (1280, 800)
SETTLE_MS = 500
TIMEOUT_SECONDS = 120.0
#: The offline route of the turn: the emulator standing in for an official endpoint.
ROUTE = "emulator/anthropic/claude-opus-5-5"
#: The file the turn's tool call reads; its text must come back in the tool result and the payload.
PROBE_FILE = "smoke-probe.txt"
PROBE_TEXT = "pi-desktop smoke probe 7f3a"
PROMPT = f'Read the probe file. [[tool:read {{"path": "{PROBE_FILE}"}}]]'
log = logging.getLogger(__name__)


def smoke_requested(flag: bool) -> bool:
    return flag or os.environ.get(SMOKE_ENV, "").strip() not in ("", "0")


def prepare_workspace(folder: Path) -> Path:
    """The turn's workspace: one file for the tool call to read."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / PROBE_FILE).write_text(PROBE_TEXT + "\n", encoding="utf-8")
    return folder


def start_options(open_path: str | None) -> dict[str, Any]:
    """The worker's start: the emulator route, a new session (or the file given), no welcome."""
    return {"route": ROUTE, "mode": "ask", "fallback": "folded", "firstRun": False, "session": open_path}


class SmokeRun(QObject):
    """The checkpoints, checked on the GUI thread every 20 ms until the last one or the deadline."""

    def __init__(
        self, app: QApplication, window: MainWindow, worker: SessionWorker, open_path: str | None
    ) -> None:
        super().__init__(window)
        self.app, self.window, self.open_path = app, window, open_path
        self.started: Started | None = None
        self.picture: QImage | None = None
        self.problem = ""
        self.step = "window-shown"
        self.deadline = time.monotonic() + TIMEOUT_SECONDS
        self.timer = QTimer(self)
        self.timer.setInterval(20)
        self.timer.timeout.connect(self.check)
        # Queued to this (GUI-thread) object: the worker emits on its own thread.
        worker.started.connect(self.on_started)
        worker.message.connect(self.on_message)
        worker.open_problem.connect(self.on_open_problem)

    def start(self) -> None:
        if os.environ.get(SCREENSHOT_ENV):
            self.window.resize(*SCREENSHOT_SIZE)
        self.timer.start()

    @Slot(object)
    def on_started(self, started: Started) -> None:
        self.started = started

    @Slot(str, str)
    def on_message(self, level: str, text: str) -> None:
        if level == "error" and not self.problem:
            self.problem = text

    @Slot(object)
    def on_open_problem(self, problem: OpenProblem) -> None:
        self.problem = self.problem or f"{problem.title}: {problem.text}"

    @Slot()
    def check(self) -> None:
        if self.problem:
            self.finish(f"smoke-test: failed at {self.step}: {self.problem}", 1)
        elif time.monotonic() > self.deadline:
            self.finish(f"smoke-test: failed at {self.step}: not reached within {TIMEOUT_SECONDS:.0f}s", 1)
        else:
            self.advance()

    def advance(self) -> None:
        """One step further when the window shows the previous one done."""
        window = self.window
        if self.step == "window-shown":
            handle = window.windowHandle()
            if handle is not None and handle.isExposed():
                say(f"window-shown: {app_part(window.windowTitle())}")
                self.step = "session-opened"
        elif self.step == "session-opened":
            if self.started is not None and window.session is not None:
                say(f"initial-route: {self.started.initial_route}")
                if self.started.keyring_note:
                    say(f"keyring: {self.started.keyring_note}")
                say(f"session-opened: {window.session.path}")
                if self.open_path is None:
                    window.send(PROMPT)
                    self.step = "turn-finished"
                else:
                    self.show_payload()
        elif self.step == "turn-finished":
            self.approve_tools()
            if window.turn_results:
                self.check_turn(window.turn_results[0])
        elif self.step == "payload-rendered":
            pane = window.payload_view.main
            text = pane.body.toPlainText()
            if not pane.stale and pane.body_bytes and (self.open_path is not None or PROBE_TEXT in text):
                say(f"payload-rendered: {len(pane.body_bytes)} bytes")
                self.finish("smoke-test: ok", 0)

    def save_screenshot(self) -> None:
        """After the event loop (the GUI thread writes no file while it runs): the picture taken
        at the end, to the file ``PI_DESKTOP_SMOKE_SCREENSHOT`` names."""
        path = os.environ.get(SCREENSHOT_ENV)
        if path and self.picture is not None and not self.picture.isNull():
            say(f"screenshot: {path}" if self.picture.save(path) else f"screenshot: could not write {path}")

    def approve_tools(self) -> None:
        """The turn's one tool call may ask (the mode is ``ask``): allow exactly that read."""
        for dialog in list(self.window.permission_dialogs):
            if dialog.info.get("tool") == "read":
                dialog.allow_button.click()

    def check_turn(self, result: TurnFinished) -> None:
        if result.error is not None or result.stopped != "stop":
            self.problem = f"the turn ended with {result.stopped!r}: {result.error}"
            return
        tools = [row for row in self.window.timeline.rows if row.get("type") == "toolResult"]
        outputs = [str(row.get("message", {}).get("content", "")) for row in tools]
        if not tools or tools[0]["message"].get("isError") or PROBE_TEXT not in outputs[0]:
            self.problem = f"the read tool's result is not the probe file: {outputs[:1]}"
            return
        say(
            f"turn-finished: {len(self.window.timeline.rows)} rows, tool {tools[0]['message'].get('toolName')}"
        )
        self.show_payload()

    def show_payload(self) -> None:

        # Lazy for the hand-over budget: ``app.py`` asks ``smoke_requested`` before a running window
        # takes the files (benchmarks/handover_bench.py), and the window's modules must not load first.
        from desktop.ui.main_window import TAB_PAYLOAD

        self.window.tabs.setCurrentIndex(TAB_PAYLOAD)
        self.step = "payload-rendered"

    def finish(self, line: str, status: int) -> None:
        self.timer.stop()
        if os.environ.get(SCREENSHOT_ENV) and self.picture is None:
            # Let the layouts the last step asked for settle, then take the picture.
            self.picture = QImage()
            QTimer.singleShot(SETTLE_MS, lambda: self.finish(line, status))
            return
        if self.picture is not None:
            self.picture = self.window.grab().toImage()
        say(line)
        self.window.close()
        self.app.exit(status)


def say(line: str) -> None:
    """Stdout when there is one (a windowed Windows build has none), and the log either way."""
    log.info("%s", line)
    if sys.stdout is not None:
        print(line, flush=True)
