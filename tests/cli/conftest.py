"""What the command-line tests share: a stand-in for the window's launcher."""

from __future__ import annotations

import argparse
import sys
import types
from typing import Any

import pytest


@pytest.fixture
def fake_launch(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """Stands in for ``desktop.ui.launch``: records windows started and refusals shown."""
    calls: dict[str, list[Any]] = {"windows": [], "refusals": []}
    module = types.ModuleType("desktop.ui.launch")

    def run_gui(args: argparse.Namespace) -> int:
        calls["windows"].append(args)
        return 0

    def refuse_in_window(text: str) -> int:
        calls["refusals"].append(text)
        return 2

    module.run_gui = run_gui  # type: ignore[attr-defined]
    module.refuse_in_window = refuse_in_window  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "desktop.ui.launch", module)
    return calls
