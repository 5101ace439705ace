"""The window the screenshot scripts drive: a throwaway data folder, the offline emulator, and
small helpers to let the event loop run, wait for a condition and grab the screen.

Shared by ``screenshots.py``, ``screenshots_readable.py`` and ``screenshots_inspect.py`` so each
script holds only the scenes it shows. Import it only after the environment is set
(``PI_DESKTOP_DATA_DIR``, ``PI_DESKTOP_OFFLINE``, ``HOME`` where a script needs one).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QSettings
from PySide6.QtWidgets import QApplication

from desktop.ui.app_identity import apply_identity
from desktop.ui.main_window import MainWindow
from desktop.ui.theme import apply_theme
from desktop.ui.worker import start_worker, stop_worker


class ShotWindow:
    """One main window on its own worker, sized to the screen it is photographed on."""

    def __init__(self, data: Path, out: Path, width: int, height: int, **worker: Any) -> None:
        QSettings.setDefaultFormat(QSettings.Format.IniFormat)
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(data / "qsettings"))
        self.app = QApplication(sys.argv[:1])
        apply_identity(self.app)
        QCoreApplication.setOrganizationName("pi-desktop-screenshots")
        apply_theme(self.app)
        self.thread, self.worker, self.client = start_worker(offline=True, **worker)
        self.window = MainWindow(self.worker, self.client)
        self.window.setGeometry(0, 0, width, height)
        self.window.show()
        self.width, self.height = width, height
        self.out = out
        out.mkdir(parents=True, exist_ok=True)

    def pump(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.app.processEvents()
            time.sleep(0.01)

    def wait(self, condition: Callable[[], object], timeout: float = 90) -> None:
        end = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > end:
                raise SystemExit("timed out waiting for the window")
            self.app.processEvents()
            time.sleep(0.01)

    def shot(self, filename: str, settle: float = 0.5) -> None:
        self.pump(settle)
        pixmap = self.app.primaryScreen().grabWindow(0, 0, 0, self.width, self.height)
        path = self.out / filename
        pixmap.save(str(path))
        print("wrote", path)

    def close(self) -> None:
        stop_worker(self.thread, self.worker, self.client)
