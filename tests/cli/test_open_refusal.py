"""A file the window cannot open is refused before Qt starts, in File → Open's words (design G8).

The terminal gets one line; the no-console launcher (what a file manager runs) a message box.
Either way the text is the description the window shows for the same file.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from desktop.app import gui_main
from desktop.ui.inspect_ops import file_format
from tests.cli.helpers import assert_one_line_error, make_session, run_main


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


def test_the_no_console_launcher_shows_a_message_box_and_passes_a_session_on(
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
    session = make_session(tmp_path)
    monkeypatch.setattr(sys, "argv", ["pi-desktop-gui", str(session)])
    assert gui_main() == 0
    assert [args.open_paths for args in fake_launch["windows"]] == [[str(session)]]
