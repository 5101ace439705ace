"""The window of the session-state tests: the shared ``Harness`` started with exactly the
options a test gives (no route: the settings' or the session's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop.emulator import Emulator
from tests.ui.conftest import TURN_TIMEOUT, Harness

__all__ = ["TURN_TIMEOUT", "Window"]


class Window(Harness):
    def __init__(self, qtbot: Any, workspace: Path, emulator: Emulator) -> None:
        super().__init__(qtbot, workspace, emulator=emulator)

    def start(self, **options: Any) -> None:  # type: ignore[override]
        self.launch(**options)
