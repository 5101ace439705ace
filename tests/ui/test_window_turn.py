"""A full turn through the window against the in-process emulator, on the real worker thread.

Type, send (Ctrl+Enter), watch the streamed answer, approve the tool in the permission
dialog, toggle hidden rows, read the section diff, the activation tab and the payload
preview, then compact. A second test checks on which thread every journal write and every
permission decision happens, and a 10 ms timer probe checks the GUI event loop never stalls
longer than 100 ms while a long answer streams and a tool runs.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QElapsedTimer, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMessageBox

from desktop.emulator import Fault
from desktop.host.journal import writer as journal_writer
from desktop.session.inspector import preview as inspector_preview
from desktop.session.runtime import SessionRuntime
from desktop.ui import rowinfo
from desktop.ui.main_window import TAB_ACTIVATION, TAB_DIFF, TAB_PAYLOAD, TAB_USAGE
from desktop.ui.payload_view import PayloadView
from desktop.ui.timeline_model import ROW_ROLE
from desktop.ui.worker import QtPermissionBridge, SessionWorker
from tests.ui.conftest import TURN_TIMEOUT, Harness


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "workspace").mkdir()
    (tmp_path / "workspace" / "AGENTS.md").write_text("# Test workspace\nBe brief.\n", encoding="utf-8")
    return tmp_path / "workspace"


def approve_next_permission(h: Harness, remember: bool = False) -> dict[str, Any]:
    h.qtbot.waitUntil(lambda: bool(h.window.permission_dialogs), timeout=TURN_TIMEOUT)
    dialog = h.window.permission_dialogs[0]
    info = dict(dialog.info)
    dialog.remember.setChecked(remember)
    dialog.allow_button.click()
    return info


def test_full_turn_through_the_window(harness: Harness) -> None:
    h, window = harness, harness.window
    before_turn = h.previews[-1]
    assert before_turn.get("error") is None and before_turn["body"]

    editor = window.composer.editor
    h.qtbot.keyClicks(editor, 'Run a command for me. [[tool:bash {"command": "echo hello-from-bash"}]]')
    h.qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert editor.toPlainText() == ""

    asked = approve_next_permission(h)
    assert asked["tool"] == "bash" and "echo hello-from-bash" in asked["summary"]
    assert Path(asked["cwd"]).name == "workspace"  # the prompt names the working directory
    result = h.wait_turn(1)
    assert result.error is None and result.stopped == "stop"

    # The streamed answer reached the GUI while it was being generated, then became a row.
    assert h.streamed > 0, "no streamed partial message reached the window"
    kinds = h.kinds()
    assert kinds.count("assistant") == 2 and "toolResult" in kinds
    tool_row = next(r for r in h.rows() if r["type"] == "toolResult")
    assert not tool_row["message"]["isError"]
    final = next(r for r in reversed(h.rows()) if r["type"] == "assistant")
    answer = window.timeline.index(window.timeline.rows.index(final)).data(Qt.ItemDataRole.DisplayRole)
    assert "hello-from-bash" in answer
    assert window.timeline.rowCount() == len(h.rows())  # the streaming row is gone

    # Hidden system rows appear when toggled (Ctrl+H's action).
    systems = [r for r in h.rows() if r["type"] == "system"]
    assert systems, "continuation should have journaled the baseline system row"
    visible = {window.shown.index(i, 0).data(ROW_ROLE)["id"] for i in range(window.shown.rowCount())}
    assert not any(r["id"] in visible for r in systems)
    assert f"{len(systems)} hidden system row" in window.hidden_notice.text()
    window.hidden_action.trigger()
    visible = {window.shown.index(i, 0).data(ROW_ROLE)["id"] for i in range(window.shown.rowCount())}
    assert all(r["id"] in visible for r in systems)

    # The section diff of the baseline row: every section is new.
    h.select(lambda row: row["id"] == systems[0]["id"])
    assert window.tabs.currentIndex() == TAB_DIFF
    diff = window.diff_view.current
    assert diff is not None
    names = {c.name for c in diff.changes}
    assert {"tool_activation"} <= names and all(c.status == "added" for c in diff.changes)
    assert "Be brief." in window.diff_view.toPlainText()

    # The activation tab: valid, identity bound to this route, the declaration policy.
    window.tabs.setCurrentIndex(TAB_ACTIVATION)
    info = window.activation_view.info
    assert info.get("available") and info["valid"]
    assert info["inputs"]["model"] == "deepseek-flash" and len(info["identity"]) == 64
    # The emulator stands in for the official deepseek-flash endpoint: fixed declarations (A2).
    assert info["policy"]["mode"] == "fixed" and info["policy"]["fallback"] is None
    assert {"bash", "read", "write"} <= set(info["inputs"]["declarations"])
    assert "deepseek-flash" in window.activation_view.toPlainText()

    # The payload preview changed with the turn and marks where it leaves the previous request.
    window.tabs.setCurrentIndex(TAB_PAYLOAD)
    h.qtbot.waitUntil(lambda: h.previews[-1]["body"] != before_turn["body"], timeout=TURN_TIMEOUT)
    after = h.previews[-1]
    assert b"hello-from-bash" in after["body"]
    assert after["previous"] is not None and 0 < after["breakBytes"] < len(after["body"])
    assert after["body"][: after["breakBytes"]] == after["previous"][: after["breakBytes"]]
    assert "x-api-key" not in after["body"].decode() and all(
        v == "<redacted>" for k, v in after["headers"].items() if k.lower() in ("x-api-key", "authorization")
    )
    assert window.payload_view.main.body_bytes == after["body"]

    # Compact: below the 20,000-token retained tail the button says there is nothing to compact
    # yet; after a long turn its tooltip and confirmation say what will happen (design C1), then
    # the compaction row the timeline shows says what did. Planned again on the worker after each turn.
    h.qtbot.waitUntil(lambda: window.compaction_preview is not None, timeout=TURN_TIMEOUT)
    assert window.compaction_preview is not None and not window.compaction_preview.possible
    assert "nothing to compact yet" in window.compact_button.toolTip()
    assert h.send("Now at length. " + "context " * 6000 + " [[words:6000]]").error is None
    h.qtbot.waitUntil(
        lambda: window.compaction_preview is not None and window.compaction_preview.possible,
        timeout=TURN_TIMEOUT,
    )
    preview = window.compaction_preview
    assert preview is not None and preview.rows > 0
    assert f"~{preview.tokens_before:,} → ~{preview.tokens_after:,} tokens" in window.compact_button.toolTip()
    h.qtbot.mouseClick(window.compact_button, Qt.MouseButton.LeftButton)
    confirm = window.compact_confirm
    assert confirm is not None and f"summarizes {preview.rows} row" in confirm.informativeText()
    confirm.button(QMessageBox.StandardButton.Yes).click()
    compacted = h.wait_turn(3)
    assert compacted.error is None, compacted
    assert window.timeline.kind_at(len(h.rows()) - 1) == rowinfo.COMPACTION
    comp = h.rows()[-1]
    assert comp["type"] == "compaction" and comp["summary"]
    assert comp["rowsSummarized"] == preview.rows and comp["tokensBefore"] == preview.tokens_before
    shown = window.timeline.index(len(h.rows()) - 1).data(Qt.ItemDataRole.DisplayRole)
    assert shown.startswith(f"compacted {preview.rows} rows: ~{preview.tokens_before:,} → ~")
    window.tabs.setCurrentIndex(TAB_USAGE)
    assert window.usage_view.model.rowCount() == 4  # three replies and the summary request
    assert "4 requests" in window.usage_view.summary.text()


def test_journal_writes_and_permission_decisions_happen_on_the_worker_thread(
    unstarted: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[int] = []
    decisions: list[int] = []
    real_request = QtPermissionBridge.request_permission

    def counted(write: Any) -> Any:
        def on_this_thread(*args: Any, **kwargs: Any) -> Any:
            writes.append(threading.get_ident())
            return write(*args, **kwargs)

        return on_this_thread

    def request_permission(self: QtPermissionBridge, request: Any) -> Any:
        answer = real_request(self, request)
        decisions.append(threading.get_ident())  # the decision is returned to the Host here
        return answer

    monkeypatch.setattr(journal_writer, "write_all", counted(journal_writer.write_all))
    monkeypatch.setattr(journal_writer, "write_new_file", counted(journal_writer.write_new_file))
    monkeypatch.setattr(QtPermissionBridge, "request_permission", request_permission)

    h = unstarted
    h.start()
    h.window.send(
        'two commands [[tool:bash {"command": "echo one"}]] [[tool:write {"path": "out.txt", "content": "x"}]]'
    )
    approve_next_permission(h)
    h.qtbot.waitUntil(
        lambda: len(h.window.permission_dialogs) == 0 or len(decisions) >= 1, timeout=TURN_TIMEOUT
    )
    approve_next_permission(h)
    h.wait_turn(1)
    worker_thread = h.worker.thread_id
    assert worker_thread is not None and worker_thread != threading.get_ident()
    assert len(writes) >= 5 and set(writes) == {worker_thread}
    assert len(decisions) == 2 and set(decisions) == {worker_thread}
    assert (h.tmp / "out.txt").read_text() == "x"


def test_gui_never_stalls_during_a_streamed_turn_with_a_tool(harness: Harness) -> None:
    h = harness
    gaps: list[float] = []
    clock = QElapsedTimer()
    probe = QTimer()
    probe.setInterval(10)
    probe.setTimerType(Qt.TimerType.PreciseTimer)

    def tick() -> None:
        gaps.append(clock.restart() / 1000)

    probe.timeout.connect(tick)
    auto = QTimer()
    auto.setInterval(5)
    auto.timeout.connect(lambda: [d.allow_button.click() for d in list(h.window.permission_dialogs)])
    # Pace the emulator's stream like a real provider (a few ms between SSE events).
    h.worker.emulator.inject(Fault("slow_stream", at_event=1, delay=0.002), times=4)
    clock.start()
    probe.start()
    # What the machine's own load does to the probe with the app idle (other processes on a
    # busy machine delay timers too); the turn may add at most 100 ms to that.
    h.qtbot.wait(500)
    idle_worst = max(gaps[1:], default=0.0)
    gaps.clear()
    clock.restart()
    auto.start()
    started = time.monotonic()
    h.send('Explain, at length. [[words:3000]] [[tool:bash {"command": "sleep 0.3; echo done"}]]')
    h.send("And once more, at length. [[words:3000]]")
    probe.stop()
    auto.stop()
    elapsed = time.monotonic() - started
    assert h.finished[0].error is None and h.finished[1].error is None
    assert h.streamed > 3, "the long answer should arrive in several streamed updates"
    worst = max(gaps[1:])
    print(
        f"\nstall probe: {len(gaps)} ticks over {elapsed:.2f}s, worst gap {worst * 1000:.1f} ms "
        f"(idle: {idle_worst * 1000:.1f} ms)"
    )
    # Generous, for a loaded machine (other processes delay timers too): the loop kept turning
    # through the whole turn and never stopped for long. benchmarks/open_bench.py and the
    # stall figures in benchmarks/README.md hold the tight numbers.
    assert worst < max(0.5, 0.1 + 2 * idle_worst), f"the GUI event loop stalled for {worst * 1000:.0f} ms"
    assert len(gaps) >= elapsed / 0.010 / 4, (
        f"the event loop turned only {len(gaps)} times in {elapsed:.1f} s"
    )


def test_escape_stops_a_streaming_turn(harness: Harness) -> None:
    h, window = harness, harness.window
    h.worker.emulator.inject(Fault("slow_stream", at_event=1, delay=0.05), times=1)
    window.send("A long story please. [[words:2000]]")
    h.qtbot.waitUntil(lambda: h.streamed > 0, timeout=TURN_TIMEOUT)
    h.qtbot.keyClick(window.composer.editor, Qt.Key.Key_Escape)
    result = h.wait_turn(1)
    assert result.stopped == "aborted"
    last = h.rows()[-1]
    assert last["type"] == "assistant" and last["message"]["stopReason"] == "aborted"
    assert window.composer.send_button.isEnabled() and not window.composer.stop_button.isEnabled()


def test_accounts_dialog_lists_key_sources_without_revealing_keys(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, no_keyring: None
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-value")
    window = harness.window
    window.show_accounts()
    dialog = window.accounts_dialog
    assert dialog is not None
    harness.qtbot.waitUntil(lambda: dialog.table.rowCount() > 0, timeout=TURN_TIMEOUT)
    cells = {
        dialog.table.item(r, 0).text(): (dialog.table.item(r, 1).text(), dialog.table.item(r, 2).text())
        for r in range(dialog.table.rowCount())
    }
    source, fingerprint = cells["openai"]
    assert source == "environment (OPENAI_API_KEY)" and len(fingerprint) == 8
    assert all("sk-test-secret-value" not in s + f for s, f in cells.values())
    dialog.key.setText("sk-another-secret")
    dialog.provider.setCurrentText("anthropic")
    dialog._save()
    assert dialog.key.text() == ""
    # Without a keyring backend the dialog says so, and how to keep working.
    harness.qtbot.waitUntil(lambda: "keyring" in dialog.status.text().lower(), timeout=TURN_TIMEOUT)
    assert "sk-another-secret" not in dialog.status.text()
    dialog.reject()


def test_previews_are_computed_only_while_the_payload_tab_is_shown(harness: Harness) -> None:
    """A long session's preview costs seconds of the worker and several times the file in
    memory: with another tab on screen a turn computes none, and showing the tab brings the
    present one (design G9)."""
    h, window = harness, harness.window
    window.tabs.setCurrentIndex(TAB_USAGE)
    shown = len(h.previews)
    h.qtbot.keyClicks(window.composer.editor, "Say something short.")
    h.qtbot.keyClick(window.composer.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert h.wait_turn(1).error is None
    h.qtbot.wait(500)  # the draft's debounce and the state published after the turn
    assert len(h.previews) == shown
    window.tabs.setCurrentIndex(TAB_PAYLOAD)
    h.qtbot.waitUntil(lambda: len(h.previews) > shown, timeout=TURN_TIMEOUT)
    assert b"Say something short." in h.previews[-1]["body"]
    assert len(h.previews) == shown + 1


def test_payload_is_marked_out_of_date_until_the_new_preview_arrives(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From the first row of a turn until the worker's new preview arrives, the pane says it is
    out of date and Copy, Save and the jump act on nothing; then it shows the request the
    emulator receives next, byte for byte (design G4, P5)."""
    h, window = harness, harness.window
    view, pane = window.payload_view, window.payload_view.main
    window.tabs.setCurrentIndex(TAB_PAYLOAD)
    editor = window.composer.editor
    editor.setPlainText("Say something short.")
    h.qtbot.waitUntil(lambda: h.previews[-1].get("draft") == "Say something short.", timeout=TURN_TIMEOUT)
    assert not pane.stale and pane.notice.isHidden() and view.copy_button.isEnabled()
    # The worker computes the next preview only when the test lets it, so the wait is visible.
    gate = threading.Event()
    compute = inspector_preview.route_preview

    def held(*args: Any, **kwargs: Any) -> dict[str, Any]:
        gate.wait(TURN_TIMEOUT / 1000)
        return compute(*args, **kwargs)

    monkeypatch.setattr(inspector_preview, "route_preview", held)
    shown = len(h.previews)
    try:
        window.composer.submit()
        result = h.wait_turn(1)
        assert result.error is None
        assert len(h.previews) == shown and pane.stale
        assert pane.notice.isVisible() and pane.notice.text().startswith("Updating:")
        assert pane.veil.isVisible()
        assert not (
            view.copy_button.isEnabled() or view.save_button.isEnabled() or view.jump_button.isEnabled()
        )
        QGuiApplication.clipboard().setText("untouched")
        view.copy()
        assert QGuiApplication.clipboard().text() == "untouched"
    finally:
        gate.set()
    h.qtbot.waitUntil(lambda: len(h.previews) > shown, timeout=TURN_TIMEOUT)
    fresh = h.previews[shown]
    # The first preview after the turn is of the session after it, without the sent text as a draft.
    assert fresh.get("draft") is None and b"Say something short." in fresh["body"]
    assert not pane.stale and pane.notice.isHidden() and pane.veil.isHidden()
    assert view.copy_button.isEnabled() and pane.body_bytes == fresh["body"]

    # The next request as shown and copied is what the emulator receives.
    editor.setPlainText("And now something else.")
    h.qtbot.waitUntil(lambda: h.previews[-1].get("draft") == "And now something else.", timeout=TURN_TIMEOUT)
    h.qtbot.waitUntil(lambda: not pane.stale, timeout=TURN_TIMEOUT)
    shown_bytes = pane.body_bytes
    view.copy()
    assert QGuiApplication.clipboard().text() == shown_bytes.decode("utf-8")
    sent_before = len(h.worker.emulator.requests)
    window.composer.submit()
    assert h.wait_turn(2).error is None
    assert h.worker.emulator.requests[sent_before].body == shown_bytes


def test_hidden_tab_is_marked_out_of_date_and_brought_up_to_date_when_shown(harness: Harness) -> None:
    """Behind another tab nothing is computed, but the pane is marked at once; showing the tab
    brings the new preview and clears the mark (design G4, G9)."""
    h, window = harness, harness.window
    pane = window.payload_view.main
    assert not pane.stale
    assert h.send("Say something short.").error is None
    h.qtbot.waitUntil(lambda: pane.stale, timeout=TURN_TIMEOUT)
    shown = len(h.previews)
    window.tabs.setCurrentIndex(TAB_PAYLOAD)
    h.qtbot.waitUntil(lambda: len(h.previews) > shown, timeout=TURN_TIMEOUT)
    assert not pane.stale and pane.notice.isHidden() and window.payload_view.copy_button.isEnabled()
    assert b"Say something short." in pane.body_bytes


def test_without_a_session_the_out_of_date_pane_says_so(qtbot: Any) -> None:
    """A pane marked out of date never waits for a preview that cannot come: with no session
    open the worker answers with an error, which the pane shows in place of the request."""
    worker = SessionWorker(offline=True)  # never started: no session, no route
    view = PayloadView()
    qtbot.addWidget(view)
    worker.previews_outdated.connect(view.mark_stale)
    worker.preview_ready.connect(view.show_preview)
    worker.set_draft("a draft")  # the state changed: marked, but the tab is not shown
    assert view.main.stale and view.main.notice.text() == "Computing the next request…"
    worker.set_previews_shown(True)
    assert not view.main.stale and view.main.notice.isHidden()
    assert "no session is open" in view.main.body.toPlainText()
    assert not view.copy_button.isEnabled() and not view.save_button.isEnabled()


def test_a_closed_comparison_is_no_longer_computed(harness: Harness) -> None:
    """Each preview of a long session costs seconds of the worker: once the comparison is set
    back to "No comparison", changes compute the main request only (design G9)."""
    h, window = harness, harness.window
    view = window.payload_view
    window.tabs.setCurrentIndex(TAB_PAYLOAD)
    slots: list[str] = []
    h.worker.preview_ready.connect(lambda slot, _preview: slots.append(slot))
    view.compare_combo.setCurrentIndex(1)
    view.compare_combo.activated.emit(1)
    h.qtbot.waitUntil(lambda: bool(view.compare.preview) and not view.compare.stale, timeout=TURN_TIMEOUT)
    view.compare_combo.setCurrentIndex(0)
    view.compare_combo.activated.emit(0)
    assert view.compare.isHidden()
    shown = len(h.previews)
    slots.clear()
    h.client.set_mode.emit("ask")  # republishes every preview the worker computes
    view.request("main")  # answered after all of those
    h.qtbot.waitUntil(lambda: len(h.previews) >= shown + 2, timeout=TURN_TIMEOUT)
    assert slots == ["main", "main"]


def test_writing_the_first_message_warms_the_session_on_the_worker(
    unstarted: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first send after an open pays for the new message only: the worker projects the
    history while the user writes (design X31), once per draft, on its own thread."""
    warmed: list[tuple[int, str]] = []
    real = SessionRuntime.warm

    def counted(self: SessionRuntime, draft: str) -> None:
        warmed.append((threading.get_ident(), draft))
        real(self, draft)

    monkeypatch.setattr(SessionRuntime, "warm", counted)
    h = unstarted
    h.launch(route=h.route, mode="ask", fallback="folded")  # the message tab: no preview is made
    assert warmed == []  # looking at a session costs nothing
    h.qtbot.keyClicks(h.window.composer.editor, "Say")
    h.qtbot.waitUntil(lambda: bool(warmed), timeout=TURN_TIMEOUT)
    h.qtbot.keyClicks(h.window.composer.editor, " something short.")
    h.qtbot.wait(600)  # past the draft's debounce: the same draft goes on, no second warm-up
    assert warmed == [(h.worker.thread_id, "Say")]  # on the worker, for what is written
    h.qtbot.keyClick(h.window.composer.editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert h.wait_turn(1).error is None
