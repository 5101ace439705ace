"""``MainWindow.open_path``: what ``pi-desktop PATH`` and a second launch call (design G8).

On the real worker thread with the in-process emulator: the title names the session and its
workspace; the session already showing is not reopened; a file handed over during a turn waits
for the turn to end and then opens; an unknown file gets File → Open's message.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QFileOpenEvent
from PySide6.QtWidgets import QApplication, QFileDialog

from desktop.host.journal.writer import JournalWriter
from desktop.host.trust import TrustStore
from desktop.ui.single_instance import FileOpenEvents
from tests.ui.conftest import ROUTE, TURN_TIMEOUT, Harness

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PI_SESSION = next(iter(sorted((FIXTURES / "pi_sessions").glob("*.jsonl"))))
CLAUDE_SESSION = next(iter(sorted((FIXTURES / "claude_code").rglob("*.jsonl"))))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "home-ws").mkdir()
    return tmp_path / "home-ws"


def _session(tmp_path: Path, name: str, folder: str) -> Path:
    """A session recorded in a folder the user confirmed before, so opening it asks nothing
    (a new folder is asked about: tests/ui/test_workspace_choice.py, design A10)."""
    workspace = tmp_path / folder
    workspace.mkdir()
    TrustStore.at().confirm_workspace(workspace.resolve())
    path = tmp_path / name
    JournalWriter.create(path, cwd=workspace, app_version="0.1.0").close()
    return path


def test_the_title_names_the_session_and_its_workspace(harness: Harness, tmp_path: Path) -> None:
    h = harness
    assert h.window.windowTitle().endswith(" · home-ws — Pi Desktop")
    other = _session(tmp_path, "other.jsonl", "other-ws")
    h.window.open_path(other)
    h.wait_open(other)
    assert h.window.windowTitle() == "other.jsonl · other-ws — Pi Desktop"
    assert h.window.recent_sessions()[0] == str(other)


def test_the_session_already_showing_is_not_reopened(harness: Harness, tmp_path: Path) -> None:
    h = harness
    opened: list[str] = []
    h.client.open_session.connect(opened.append)
    current = Path(h.window.session.path)
    link = tmp_path / "link.jsonl"
    link.symlink_to(current)
    h.window.open_paths([str(link)])
    h.window.open_path(current)
    assert opened == []
    other = _session(tmp_path, "other.jsonl", "other-ws")
    h.window.open_path(other)
    assert opened == [str(other)]


def test_a_file_handed_over_during_a_turn_opens_when_the_turn_ends(harness: Harness, tmp_path: Path) -> None:
    h = harness
    first = h.window.session.path
    other = _session(tmp_path, "queued.jsonl", "queued-ws")
    h.window.send("Say something short.")
    h.window.open_path(other)  # the turn is running: the file waits
    assert h.window.queued_open == str(other)
    assert h.window.session.path == first
    result = h.wait_turn(1)
    assert result.error is None
    h.wait_open(other)
    assert h.window.queued_open is None
    assert h.window.windowTitle() == "queued.jsonl · queued-ws — Pi Desktop"


def test_an_unknown_file_gets_the_open_dialogs_message(
    harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness
    first = h.window.session.path
    unknown = tmp_path / "events.jsonl"
    unknown.write_text('{"type":"event","v":1}\n', encoding="utf-8")
    problems = h.window.inspect.problems
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *_a, **_k: (str(unknown), ""))
    h.window.open_session_dialog()
    h.qtbot.waitUntil(lambda: len(problems) == 1, timeout=TURN_TIMEOUT)
    h.window.open_path(unknown)
    h.qtbot.waitUntil(lambda: len(problems) == 2, timeout=TURN_TIMEOUT)
    assert problems[1] == problems[0]
    assert str(unknown) in problems[1][1] and "not a session this app can open" in problems[1][1]
    assert h.window.session.path == first


def test_pi_and_claude_code_sessions_open_read_only(harness: Harness) -> None:
    h = harness
    for fixture in (PI_SESSION, CLAUDE_SESSION):
        h.window.open_path(fixture)
        h.wait_open(fixture)
        assert h.window.inspect.foreign is not None
        assert h.window.windowTitle().startswith(f"{fixture.name} · ")


def test_extra_files_go_to_open_recent(harness: Harness, tmp_path: Path) -> None:
    h = harness
    one = _session(tmp_path, "one.jsonl", "one-ws")
    two = _session(tmp_path, "two.jsonl", "two-ws")
    h.window.open_paths([str(one), str(two)])
    h.wait_open(one)
    recent = h.window.recent_sessions()
    assert recent[0] == str(one) and str(two) in recent


def test_a_finder_open_event_opens_the_session(harness: Harness, tmp_path: Path) -> None:
    """macOS delivers Finder's Open to the running app as a QFileOpenEvent (design G8)."""
    h = harness
    app = QApplication.instance()
    assert app is not None
    events = FileOpenEvents(app)
    app.installEventFilter(events)
    events.open_requested.connect(h.window.open_paths)
    try:
        other = _session(tmp_path, "from-finder.jsonl", "finder-ws")
        QApplication.sendEvent(app, QFileOpenEvent(str(other)))
        h.wait_open(other)
        assert h.window.windowTitle() == "from-finder.jsonl · finder-ws — Pi Desktop"
    finally:
        app.removeEventFilter(events)


def test_a_session_named_at_start_is_on_screen_before_the_emulator_starts(
    unstarted: Harness, tmp_path: Path
) -> None:
    """``pi-desktop PATH``: the rows are indexed and painted first; the emulator, the keyring
    and the routes (a second or more on a cold start) come after (design G9)."""
    h = unstarted
    path = _session(tmp_path, "named.jsonl", "named-ws")
    emulator_at_index: list[object] = []
    h.worker.session_indexed.connect(lambda _info: emulator_at_index.append(h.worker.emulator))
    h.launch(route=ROUTE, session=str(path))
    assert h.window.session.path == str(path)
    assert emulator_at_index == [None]
