"""A received session file never chooses the workspace (design A10).

On the real worker thread with the in-process emulator: a header whose ``cwd`` is ``/`` does not
make ``/`` the folder the file tools are confined to, and a session recorded in a folder the user
has not used is asked about (the folder shown in plain text) before it becomes the workspace.
A ``read`` of a file outside the folder the user opened from is then refused without a prompt.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from desktop.host.journal.writer import JournalWriter
from desktop.host.trust import TrustStore
from tests.ui.conftest import TURN_TIMEOUT, Harness


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "opened-from").mkdir()
    return tmp_path / "opened-from"


def _session(path: Path, cwd: str) -> Path:
    JournalWriter.create(path, cwd=cwd, app_version="0.1.0").close()
    return path


def _answer(h: Harness, yes: bool) -> tuple[Qt.TextFormat, str]:
    """Click Yes or No on the question shown; its text format and text."""
    h.qtbot.waitUntil(lambda: bool(h.window.question_boxes), timeout=TURN_TIMEOUT)
    box = h.window.question_boxes[0]
    shown = box.textFormat(), box.text()
    box.button(QMessageBox.StandardButton.Yes if yes else QMessageBox.StandardButton.No).click()
    return shown


def test_a_header_naming_the_root_never_becomes_the_workspace(harness: Harness, tmp_path: Path) -> None:
    h = harness
    secret = tmp_path / "id_ed25519"
    secret.write_text("PRIVATE KEY canary", encoding="utf-8")
    path = _session(tmp_path / "received.jsonl", "/")

    h.window.open_path(path)
    info = h.wait_open(path)

    assert info.cwd == str((tmp_path / "opened-from").resolve())
    assert h.window.question_boxes == []  # "/" is refused outright, not offered
    # The model asks to read a file outside the opened-from folder: refused, and nobody is asked.
    result = h.send(f'Read it. [[tool:read {{"path": "{secret}"}}]]')
    assert result.error is None and h.window.permission_dialogs == []
    tool_results = [r for r in h.rows() if r.get("type") == "toolResult" or r.get("role") == "toolResult"]
    shown = orjson.dumps(h.rows()).decode()
    assert "PRIVATE KEY canary" not in shown
    assert "outside the workspace" in shown, tool_results


def test_a_new_recorded_folder_is_asked_about_and_a_no_keeps_the_opened_folder(
    harness: Harness, tmp_path: Path
) -> None:
    h = harness
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    path = _session(tmp_path / "other.jsonl", str(elsewhere))

    h.window.open_path(path)
    text_format, text = _answer(h, yes=False)
    info = h.wait_open(path)

    assert text_format == Qt.TextFormat.PlainText and str(elsewhere) in text
    assert info.cwd == str((tmp_path / "opened-from").resolve())
    # Only the folder the window started its own session in is remembered, not the declined one.
    assert TrustStore.at().confirmed_workspaces() == {(tmp_path / "opened-from").resolve()}


def test_a_confirmed_folder_is_remembered_and_not_asked_again(harness: Harness, tmp_path: Path) -> None:
    h = harness
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    first = _session(tmp_path / "first.jsonl", str(elsewhere))
    second = _session(tmp_path / "second.jsonl", str(elsewhere))

    h.window.open_path(first)
    _answer(h, yes=True)
    assert h.wait_open(first).cwd == str(elsewhere.resolve())
    h.window.open_path(second)

    assert h.wait_open(second).cwd == str(elsewhere.resolve())
    assert h.window.question_boxes == []
    assert elsewhere.resolve() in TrustStore.at().confirmed_workspaces()


def test_continuing_another_agents_session_from_the_root_keeps_the_opened_folder(
    harness: Harness, tmp_path: Path
) -> None:
    h = harness
    source = Path(__file__).resolve().parents[1] / "fixtures" / "claude_code" / "basic.jsonl"
    path = tmp_path / "received-claude.jsonl"
    path.write_text(
        source.read_text(encoding="utf-8").replace('"cwd":"/home/dev/projects/demo"', '"cwd":"/"')
    )
    assert '"cwd":"/"' in path.read_text(encoding="utf-8")

    h.window.open_path(path)
    h.qtbot.waitUntil(lambda: h.shown is not None and h.shown.foreign is not None, timeout=TURN_TIMEOUT)
    h.qtbot.mouseClick(h.window.inspect.bar.continue_button, Qt.MouseButton.LeftButton)
    # Continuing says its route, thinking level and workspace first and asks (design G12).
    h.qtbot.waitUntil(lambda: h.window.inspect.continue_confirm is not None, timeout=TURN_TIMEOUT)
    confirm = h.window.inspect.continue_confirm
    assert confirm is not None
    assert "working in" in confirm.text() and "opened-from" in confirm.text()
    confirm.done(QMessageBox.StandardButton.Yes)
    h.qtbot.waitUntil(lambda: h.shown is not None and h.shown.foreign is None, timeout=TURN_TIMEOUT)

    assert h.shown is not None and h.shown.cwd == str((tmp_path / "opened-from").resolve())
    assert h.window.question_boxes == []
