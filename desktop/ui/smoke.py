"""A hidden self-test for packaged builds: show the window, say so, quit with code 0.

Frozen bundles fail in ways the source tree never does (a missing Qt plugin, a data file
left out); the packaging tests run the built app with ``--smoke-test`` (or
``PI_DESKTOP_SMOKE_EXIT=1``) and wait for the ``window-shown:`` line on stdout.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer

from desktop.ui.open_files import app_part

if TYPE_CHECKING:  # the launcher asks smoke_requested() before it pays for QtWidgets
    from PySide6.QtWidgets import QApplication, QWidget

SMOKE_ENV = "PI_DESKTOP_SMOKE_EXIT"
TIMEOUT_SECONDS = 60.0
log = logging.getLogger(__name__)


def smoke_requested(flag: bool) -> bool:
    return flag or os.environ.get(SMOKE_ENV, "").strip() not in ("", "0")


def exit_once_shown(
    app: QApplication, window: QWidget, extra: Callable[[], dict[str, str] | None] | None = None
) -> None:
    """Poll until the window is exposed on screen (and ``extra`` has its lines, which the
    worker reports when it starts), print the proof lines, and quit cleanly."""
    deadline = time.monotonic() + TIMEOUT_SECONDS
    timer = QTimer(window)
    timer.setInterval(20)

    def check() -> None:
        handle = window.windowHandle()
        lines = extra() if extra is not None else {}
        if handle is not None and handle.isExposed() and lines is not None:
            timer.stop()
            for key, value in lines.items():
                _say(f"{key}: {value}")
            _say(f"window-shown: {app_part(window.windowTitle())}")
            window.close()
            app.exit(0)
        elif time.monotonic() > deadline:
            timer.stop()
            _say(f"smoke-test: window not shown within {TIMEOUT_SECONDS:.0f}s")
            app.exit(1)

    timer.timeout.connect(check)
    timer.start()


def _say(line: str) -> None:
    """Stdout when there is one (a windowed Windows build has none), and the log either way."""
    log.info("%s", line)
    if sys.stdout is not None:
        print(line, flush=True)
