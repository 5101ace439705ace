"""A file the window cannot open is refused before Qt starts, in File → Open's words (design G8).

The terminal gets one line; the no-console launcher (what a file manager runs) a message box.
Either way the text is the description the window shows for the same file.
"""

from __future__ import annotations

import argparse
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from desktop.app import gui_main
from desktop.ui.inspect_ops import file_format
from tests.cli.helpers import assert_one_line_error, run_main


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


def _unknown(tmp_path: Path) -> Path:
    path = tmp_path / "events.jsonl"
    path.write_text('{"type":"event","v":1}\n', encoding="utf-8")
    return path


def test_the_terminal_gets_the_windows_words(tmp_path: Path, fake_launch: dict[str, list[Any]]) -> None:
    path = _unknown(tmp_path)
    fmt, description = file_format(path)  # what the worker tells the window for File → Open
    assert fmt == "unknown"
    run = run_main(str(path))
    assert_one_line_error(run, "", 2, description)
    assert fake_launch["windows"] == []


def test_the_no_console_launcher_shows_a_message_box(
    tmp_path: Path, fake_launch: dict[str, list[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _unknown(tmp_path)
    monkeypatch.setattr(sys, "argv", ["pi-desktop-gui", str(path)])
    assert gui_main() == 2
    assert fake_launch["refusals"] == [file_format(path)[1]]
    missing = tmp_path / "gone.jsonl"
    monkeypatch.setattr(sys, "argv", ["pi-desktop-gui", str(missing)])
    assert gui_main() == 2
    assert fake_launch["refusals"][1] == f"no such session file: {missing}"
    assert fake_launch["windows"] == []


def test_refuse_in_window_is_one_message_box(qapp: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from PySide6.QtWidgets import QMessageBox

    from desktop.ui import launch

    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(QMessageBox, "exec", lambda box: shown.append((box.windowTitle(), box.text())) or 0)
    assert launch.refuse_in_window("x.jsonl: not a session") == 2
    assert shown == [("Pi Desktop", "x.jsonl: not a session")]
