"""The window asks before a repository's own commands run, and says what it left out (designs
A11 and S7).

On the real worker thread: the folder Pi Desktop opens in has a ``.pi/settings.json`` naming a
real server script that writes a marker file the moment it runs, and an ``AGENTS.md`` that links
to a file outside the repository. The window asks (plain text, the exact command shown) before
the server's first run; No runs nothing, Yes runs it and is remembered for that command.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from desktop.host.trust import TrustStore
from tests.ui.conftest import ROUTE, TURN_TIMEOUT, Harness

MARKER_SCRIPT = """import pathlib, sys
pathlib.Path(sys.argv[0]).with_name("SERVER-RAN").write_text("ran", encoding="utf-8")
"""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The folder the window opens in: a repository with its own server and a linked AGENTS.md."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".pi").mkdir()
    (repo / ".pi" / "server.py").write_text(MARKER_SCRIPT, encoding="utf-8")
    settings = {
        "mcpServers": {"repo": {"command": sys.executable, "args": ["server.py"], "startupTimeout": 5}}
    }
    (repo / ".pi" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    (tmp_path / "credentials").write_text("aws_secret_access_key = canary", encoding="utf-8")
    (repo / "AGENTS.md").symlink_to("../credentials")
    return repo


def _start(h: Harness, answer: bool) -> tuple[Qt.TextFormat, str]:
    h.window.show()
    h.qtbot.waitExposed(h.window)
    h.client.start.emit({"route": ROUTE, "mode": "ask", "fallback": "folded", "firstRun": False})
    h.qtbot.waitUntil(lambda: bool(h.window.question_boxes), timeout=TURN_TIMEOUT)
    box = h.window.question_boxes[0]
    shown = box.textFormat(), box.text()
    box.button(QMessageBox.StandardButton.Yes if answer else QMessageBox.StandardButton.No).click()
    h.qtbot.waitUntil(lambda: h.window.session is not None, timeout=TURN_TIMEOUT)
    return shown


def test_no_runs_nothing_and_the_window_says_what_it_left_out(unstarted: Harness, workspace: Path) -> None:
    h, repo = unstarted, workspace

    text_format, text = _start(h, answer=False)

    assert text_format == Qt.TextFormat.PlainText
    assert f"{sys.executable} server.py" in text and str(repo / ".pi") in text
    assert not (repo / ".pi" / "SERVER-RAN").exists()
    shown = "\n".join(b.text for b in h.window.banners.banners)
    assert "not run without your consent: mcp repo" in shown
    assert f"{repo / 'AGENTS.md'}: not read: it links to" in shown
    stored = json.loads(TrustStore.at().path.read_text(encoding="utf-8"))
    assert "projectCommands" not in stored  # nothing granted to the repository


def test_yes_runs_the_server_and_is_remembered(unstarted: Harness, workspace: Path) -> None:
    h, repo = unstarted, workspace

    _start(h, answer=True)

    h.qtbot.waitUntil(lambda: (repo / ".pi" / "SERVER-RAN").exists(), timeout=TURN_TIMEOUT)
    stored = json.loads(TrustStore.at().path.read_text(encoding="utf-8"))
    assert list(stored["projectCommands"]) == [str(repo)] and len(stored["projectCommands"][str(repo)]) == 1
