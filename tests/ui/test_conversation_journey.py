"""Journeys a new user takes through the window (design X6, X7, G17): type and send without a click,
read the streamed reply in the conversation as it arrives, come back to it after scrolling up,
ask the slash commands, export the conversation. Real worker, real emulator, real files."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox

from desktop.emulator.faults import Fault
from desktop.ui.main_window import TAB_MESSAGE
from desktop.ui.session_browser import PATH_ROLE
from tests.ui.conftest import TURN_TIMEOUT, Harness

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture
def harness(unstarted: Harness) -> Harness:
    unstarted.window.resize(1280, 800)
    unstarted.start()
    return unstarted


def test_type_send_and_read_the_streamed_reply_without_a_click(harness: Harness) -> None:
    h = harness
    window = h.window
    # The keyboard is in the composer as soon as the session opens; the conversation is on.
    h.qtbot.waitUntil(lambda: QApplication.focusWidget() is window.composer.editor, timeout=TURN_TIMEOUT)
    assert window.message_view.conversation.isChecked()
    assert window.tabs.currentIndex() == TAB_MESSAGE
    # Typed into whatever has the focus, sent with Ctrl+Enter: no click anywhere.
    h.worker.emulator.inject(Fault("slow_stream", at_event=4, delay=0.03), times=1)  # time to watch it
    h.qtbot.keyClicks(QApplication.focusWidget(), "Tell me a long story. [[words:1500]]")
    h.qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    # While it streams, the reply appears in the conversation, and the pane keeps its end in view.
    h.qtbot.waitUntil(lambda: "Assistant (streaming)" in h.conversation(), timeout=TURN_TIMEOUT)
    h.wait_turn(1)
    bar = window.message_view.browser.verticalScrollBar()
    h.qtbot.waitUntil(
        lambda: (
            "Assistant (streaming)" not in h.conversation() and "Tell me a long story" in h.conversation()
        ),
        timeout=TURN_TIMEOUT,
    )
    reply = window.timeline.rows[-1]
    assert reply["type"] == "assistant"
    last_words = str(reply["message"]["content"][-1]["text"]).split()[-3:]
    assert " ".join(last_words) in " ".join(h.conversation().split())
    assert bar.maximum() > 0 and bar.value() == bar.maximum()
    assert not window.message_view.jump_button.isVisible()


def test_scrolled_up_reader_stays_put_and_jumps_back_to_the_latest(harness: Harness) -> None:
    h = harness
    window = h.window
    view = window.message_view
    h.send("A long first answer. [[words:1500]]")
    h.qtbot.waitUntil(
        lambda: view.following and view.browser.verticalScrollBar().maximum() > 0, timeout=TURN_TIMEOUT
    )
    bar = view.browser.verticalScrollBar()
    bar.setValue(0)  # the reader scrolls up to read the question
    assert view.scrolled_up and view.jump_button.isVisible()
    h.worker.emulator.inject(Fault("slow_stream", at_event=4, delay=0.03), times=1)
    window.send("And a second one. [[words:1500]]")
    h.qtbot.waitUntil(lambda: "Assistant (streaming)" in h.conversation(), timeout=TURN_TIMEOUT)
    assert bar.value() == 0  # not yanked to the end while the reply streams
    h.wait_turn(2)
    h.qtbot.waitUntil(lambda: "And a second one" in h.conversation(), timeout=TURN_TIMEOUT)
    assert bar.value() == 0
    h.qtbot.mouseClick(view.jump_button, Qt.MouseButton.LeftButton)
    h.qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum(), timeout=TURN_TIMEOUT)
    assert not view.jump_button.isVisible()


def test_picking_a_timeline_row_scrolls_the_conversation_to_it(harness: Harness) -> None:
    h = harness
    window = h.window
    h.send("First question. [[words:800]]")
    h.send("Second question. [[words:800]]")
    h.select(lambda row: row.get("type") == "user")
    view = window.message_view
    assert not view.following
    top = view.browser.cursorForPosition(view.browser.viewport().rect().topLeft())
    top.movePosition(top.MoveOperation.EndOfBlock, top.MoveMode.KeepAnchor)
    visible = view.browser.toPlainText()[top.selectionStart() : top.selectionStart() + 400]
    assert "First question" in visible


def test_export_from_the_file_menu_writes_on_the_worker(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    h = harness
    window = h.window
    h.send("Export me <b>bold</b>.")
    target = tmp_path / "out" / "conversation.html"
    target.parent.mkdir()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_a, **_k: (str(target), "HTML page (*.html)"))
    writers: list[str] = []
    original = Path.write_bytes

    def spy(self: Path, data: bytes) -> int:
        writers.append(threading.current_thread().name)
        return original(self, data)

    monkeypatch.setattr(Path, "write_bytes", spy)
    session_before = Path(window.session.path).read_bytes()
    window.export_action.trigger()
    # The worker writes the page: wait for the whole of it, not for the file to appear.
    h.qtbot.waitUntil(lambda: bool(writers) and target.exists(), timeout=TURN_TIMEOUT)
    h.qtbot.waitUntil(lambda: "</html>" in target.read_text(encoding="utf-8"), timeout=TURN_TIMEOUT)
    page = target.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "Export me &lt;b&gt;bold&lt;/b&gt;." in page
    assert writers and threading.main_thread().name not in writers
    assert Path(window.session.path).read_bytes() == session_before
    h.qtbot.waitUntil(
        lambda: "Exported the conversation" in window.statusBar().currentMessage(), timeout=TURN_TIMEOUT
    )


def test_export_a_claude_code_session_from_the_window(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    h = harness
    window = h.window
    source = tmp_path / "cc.jsonl"
    source.write_bytes((FIXTURES / "claude_code" / "basic.jsonl").read_bytes())
    window.open_path(source)
    h.qtbot.waitUntil(lambda: getattr(window.session, "path", None) == str(source), timeout=TURN_TIMEOUT)
    target = tmp_path / "cc.md"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_a, **_k: (str(target), "HTML page (*.html)"))
    window.export_action.trigger()
    h.qtbot.waitUntil(target.exists, timeout=TURN_TIMEOUT)
    text = target.read_text(encoding="utf-8")
    assert text.startswith("# ") and "Claude Code transcript" in text and "Tool call: Bash" in text


def test_context_meter_fills_as_the_conversation_grows(harness: Harness) -> None:
    h = harness
    meter = h.window.context_meter
    h.qtbot.waitUntil(lambda: meter.figures is not None, timeout=TURN_TIMEOUT)
    before, window = meter.figures
    assert window == h.worker.resolved.model["contextWindow"]
    h.send("A long question. " + "context " * 3000 + " [[words:500]]")
    h.qtbot.waitUntil(
        lambda: meter.figures is not None and meter.figures[0] > before + 3000, timeout=TURN_TIMEOUT
    )
    used = meter.figures[0]
    assert meter.text().startswith("context ") and f"({used / window:.0%})" in meter.text()


def test_session_browser_lists_desktop_sessions_and_searches_their_text(harness: Harness) -> None:
    h = harness
    window = h.window
    h.send("Where does the zebra parser live?")
    mine = window.session.path
    window.browse_action.trigger()
    browser = window.inspect.browser
    assert browser is not None
    h.qtbot.waitUntil(lambda: mine in browser.session_paths(), timeout=TURN_TIMEOUT)
    tops = [browser.tree.topLevelItem(i) for i in range(browser.tree.topLevelItemCount())]
    desktop = [top for top in tops if top is not None and top.text(1) == "Pi Desktop"]
    entry = next(
        top.child(j)
        for top in desktop
        for j in range(top.childCount())
        if top.child(j).data(0, PATH_ROLE) == mine
    )
    assert entry.text(0) == "Where does the zebra parser live?"
    assert entry.text(2) == "deepseek/deepseek-flash" and entry.text(4).startswith("$")
    assert entry.text(3)  # last activity
    browser.filter.setText("ECHO:")  # words of the reply, not of the title
    assert not entry.isHidden()
    browser.filter.setText("no session says this")
    assert entry.isHidden()
    browser.reject()


def test_a_tool_asks_first_and_its_call_and_result_read_under_the_turn(harness: Harness) -> None:
    """The permission prompt comes up over the conversation; Tab to Allow and Space, no mouse;
    the call and its result are then read in the conversation under the reply's turn."""
    h = harness
    window = h.window
    h.qtbot.waitUntil(lambda: QApplication.focusWidget() is window.composer.editor, timeout=TURN_TIMEOUT)
    editor = QApplication.focusWidget()
    h.qtbot.keyClicks(editor, 'Run it. [[tool:bash {"command": "echo journey-tool-ran"}]]')
    h.qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    h.qtbot.waitUntil(lambda: bool(window.permission_dialogs), timeout=TURN_TIMEOUT)
    dialog = window.permission_dialogs[0]
    assert "echo journey-tool-ran" in dialog.info["summary"]
    dialog.allow_button.setFocus()
    h.qtbot.keyClick(dialog.allow_button, Qt.Key.Key_Space)
    assert h.wait_turn(1).error is None
    h.qtbot.waitUntil(lambda: "Assistant (streaming)" not in h.conversation(), timeout=TURN_TIMEOUT)
    text = " ".join(h.conversation().split())
    question, call = text.find("Run it."), text.find("echo journey-tool-ran")
    result = text.find("journey-tool-ran", call + len("echo journey-tool-ran"))
    assert 0 <= question < call < result, text[-800:]


def test_compact_from_the_conversation_says_the_figures_the_meter_shows(harness: Harness) -> None:
    """/compact asks with the button's preview; after it, the conversation's compaction notice
    starts from the figure the context meter showed (design G14)."""
    h = harness
    window = h.window
    h.send("A first question. [[words:200]]")
    h.send("Now at length. " + "context " * 6000 + " [[words:6000]]")
    h.qtbot.waitUntil(
        lambda: window.compaction_preview is not None and window.compaction_preview.possible,
        timeout=TURN_TIMEOUT,
    )
    h.qtbot.waitUntil(lambda: window.context_meter.figures is not None, timeout=TURN_TIMEOUT)
    preview = window.compaction_preview
    assert preview is not None and window.context_meter.figures is not None
    assert preview.tokens_before == window.context_meter.figures[0]
    window.composer.editor.setFocus()
    h.qtbot.keyClicks(window.composer.editor, "/compact")
    h.qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    h.qtbot.waitUntil(lambda: window.compact_confirm is not None, timeout=TURN_TIMEOUT)
    confirm = window.compact_confirm
    assert confirm is not None and f"~{preview.tokens_before:,} → ~" in confirm.informativeText()
    confirm.button(QMessageBox.StandardButton.Yes).click()
    assert h.wait_turn(3).error is None
    row = window.timeline.rows[-1]
    assert row["type"] == "compaction" and row["tokensBefore"] == preview.tokens_before
    h.qtbot.waitUntil(
        lambda: f"~{preview.tokens_before:,} tokens before" in h.conversation(), timeout=TURN_TIMEOUT
    )


def test_first_run_opens_on_the_conversation_with_the_keyboard_in_the_composer(unstarted: Harness) -> None:
    """A first run: the guided session (its welcome note, a skill that appears, a tool that reads
    the project) is read in the conversation, and the keyboard is in the composer for the first
    question (design G17)."""
    h = unstarted
    h.window.resize(1280, 800)
    h.window.show()
    h.qtbot.waitExposed(h.window)
    h.client.start.emit({"firstRun": True})
    h.qtbot.waitUntil(lambda: len(h.finished) >= 2, timeout=TURN_TIMEOUT)
    window = h.window
    assert window.message_view.conversation.isChecked() and window.tabs.currentIndex() == TAB_MESSAGE
    h.qtbot.waitUntil(lambda: "Welcome to Pi Desktop" in h.conversation(), timeout=TURN_TIMEOUT)
    h.qtbot.waitUntil(lambda: "Welcome project" in h.conversation(), timeout=TURN_TIMEOUT)
    h.qtbot.waitUntil(lambda: QApplication.focusWidget() is window.composer.editor, timeout=TURN_TIMEOUT)
    rows = h.rows()
    kinds = [r["type"] for r in rows]
    assert kinds.count("user") == 2 and "toolResult" in kinds
    assert any(r["type"] == "note" and "Welcome to Pi Desktop" in r["text"] for r in rows)
    changed = [r for r in rows if r["type"] == "system"][-1]
    sections = changed["modelSystem"]["message"]["sections"]
    assert "guidance" in sections and "skill:changelog" in sections and changed.get("before")
    read = next(r for r in rows if r["type"] == "toolResult")
    assert not read["message"]["isError"] and "Welcome project" in read["message"]["content"][0]["text"]
    assert "welcome-workspace" in window.session.cwd
