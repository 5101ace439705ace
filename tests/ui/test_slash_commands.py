"""Slash commands in the composer: each one acts in the window and none is sent to the model (design G8).

Real worker thread, real in-process emulator: every request the app makes is recorded by the
emulator, so "never sent to the model" is a count of its requests (and, for the commands that do
ask the model, the text of what was sent).
"""

from __future__ import annotations

import shlex
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMessageBox

from desktop.session.commands import Command, Problem
from desktop.ui.curl_text import curl_command
from desktop.ui.main_window import TAB_MESSAGE, TAB_PAYLOAD, TAB_ROW, compaction_text
from tests.ui.conftest import ROUTE, TURN_TIMEOUT, Harness


def requests(h: Harness) -> list[Any]:
    return list(h.worker.emulator.requests)


def notes(h: Harness) -> list[dict[str, Any]]:
    """The slash commands' answers in the conversation (local notes, never journaled)."""
    return [row for _after, row in h.window.message_view.local_notes]


def test_capability_status_answers_in_the_conversation_whole(harness: Harness) -> None:
    h = harness
    h.window.resize(1280, 800)
    h.window.tabs.setCurrentIndex(TAB_ROW)
    before = len(requests(h))
    rows_before = len(h.rows())
    h.type_and_send("/capability status")
    capability = h.window.status.capability
    [note] = notes(h)
    line = note["text"]
    assert line.startswith(f"{ROUTE}: system updates as {capability['delivery']}, tool changes as ")
    assert f"Why: {capability['reason']}" in line
    # Shown in the conversation, the whole of it (the status bar cut it at 1280 wide).
    assert h.window.tabs.currentIndex() == TAB_MESSAGE
    h.qtbot.waitUntil(
        lambda: f"Why: {capability['reason']}" in " ".join(h.conversation().split()), timeout=TURN_TIMEOUT
    )
    assert "only you see this" in h.conversation()
    assert h.window.composer.editor.toPlainText() == ""
    h.settle()
    assert len(requests(h)) == before and not h.window.busy
    assert len(h.rows()) == rows_before, "never journaled"


def test_payload_next_opens_the_tab_on_the_exact_next_request(harness: Harness) -> None:
    h = harness
    h.window.tabs.setCurrentIndex(TAB_ROW)
    before = len(requests(h))
    shown = len(h.previews)
    h.type_and_send("/payload next Please list the files.")
    assert h.window.tabs.currentIndex() == TAB_PAYLOAD
    editor = h.window.composer.editor
    assert editor.toPlainText() == "Please list the files.", "the draft waits in the composer"
    h.qtbot.waitUntil(
        lambda: len(h.previews) > shown and "with your draft" in h.previews[-1]["route"], timeout=TURN_TIMEOUT
    )
    preview = h.previews[-1]
    assert preview.get("error") is None, preview
    assert b"Please list the files." in preview["body"]
    assert len(requests(h)) == before, "the command itself must not reach the model"

    # Sending that draft sends exactly the previewed bytes.
    h.qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert h.wait_turn(1).error is None
    assert requests(h)[before].body == preview["body"]

    # Without a draft: the next request of the session as it stands.
    h.window.tabs.setCurrentIndex(TAB_ROW)
    shown = len(h.previews)
    h.type_and_send("/payload next")
    assert h.window.tabs.currentIndex() == TAB_PAYLOAD and editor.toPlainText() == ""
    h.qtbot.waitUntil(
        lambda: len(h.previews) > shown and "with your draft" not in h.previews[-1]["route"],
        timeout=TURN_TIMEOUT,
    )
    assert b"Please list the files." in h.previews[-1]["body"]  # now part of the history
    h.settle()
    assert len(requests(h)) == before + 1

    # Another route picked in the tab: the command shows the current route's request, and the
    # route switcher says so.
    view = h.window.payload_view
    view.route_combo.setCurrentIndex(1)
    view.request("main")
    h.qtbot.waitUntil(lambda: "current route" not in h.previews[-1]["route"], timeout=TURN_TIMEOUT)
    h.type_and_send("/payload next")
    h.qtbot.waitUntil(lambda: "current route" in h.previews[-1]["route"], timeout=TURN_TIMEOUT)
    assert view.route_combo.currentIndex() == 0 and not view.main.stale


def test_compact_with_a_focus_asks_for_that_focus(harness: Harness) -> None:
    h = harness
    # Above the 20,000-token retained tail, so there is something to summarize (design C1).
    for turn in (1, 2, 3):
        h.type_and_send(f"Tell me about the project, part {turn}. " + "context " * 3000 + " [[words:4000]]")
        assert h.wait_turn(turn).error is None
    before = len(requests(h))
    h.qtbot.waitUntil(lambda: h.window.compaction_preview is not None, timeout=TURN_TIMEOUT)
    h.qtbot.waitUntil(lambda: h.window.compaction_preview.possible, timeout=TURN_TIMEOUT)
    h.type_and_send("/compact keep the file names")
    # The same preview the Compact button shows, asked before anything is sent.
    box = h.window.compact_confirm
    assert box is not None and box.isVisible()
    assert box.informativeText() == compaction_text(h.window.compaction_preview)
    assert len(requests(h)) == before
    box.button(QMessageBox.StandardButton.Yes).click()
    result = h.wait_turn(4)
    assert result.error is None, result
    sent = requests(h)[before:]
    assert len(sent) == 1, "one summary request, and no message for the model"
    assert b"Additional focus: keep the file names" in sent[0].body
    assert all(b"/compact" not in r.body for r in requests(h))
    assert any(r.get("type") == "compaction" for r in h.rows())


def test_model_switches_the_route(harness: Harness) -> None:
    h = harness
    before = len(requests(h))
    assert h.window.status.route_key == ROUTE
    h.type_and_send("/model openai/gpt-5.5")
    h.qtbot.waitUntil(lambda: h.window.status.route_key == "emulator/openai/gpt-5.5", timeout=TURN_TIMEOUT)
    h.type_and_send("/model nobody/nothing")
    assert notes(h)[-1]["level"] == "warning"
    assert notes(h)[-1]["text"].startswith("No route nobody/nothing. Offered: ")
    assert "openai/gpt-5.5" in notes(h)[-1]["text"]
    h.settle()
    assert h.window.status.route_key == "emulator/openai/gpt-5.5"
    assert len(requests(h)) == before


def test_mode_sets_the_permission_mode(harness: Harness) -> None:
    h = harness
    before = len(requests(h))
    h.type_and_send("/mode read-only")
    h.qtbot.waitUntil(lambda: h.window.status.mode == "read-only", timeout=TURN_TIMEOUT)
    assert h.window.mode_combo.currentText() == "read-only"
    h.type_and_send("/mode yolo")
    assert notes(h)[-1]["text"] == "Unknown mode yolo. Modes: ask, accept-edits, read-only, full-access."
    h.settle()
    assert h.window.status.mode == "read-only"
    assert len(requests(h)) == before


def test_help_lists_the_commands(harness: Harness) -> None:
    h = harness
    before = len(requests(h))
    h.type_and_send("/help")
    h.qtbot.waitUntil(lambda: "//text" in h.conversation(), timeout=TURN_TIMEOUT)
    for usage in (
        "/capability status",
        "/payload next",
        "/compact [focus]",
        "/model [PROVIDER/ID]",
        "/mode NAME",
        "//text — send a message that starts with a slash (sends /text)",
    ):
        assert usage in notes(h)[-1]["text"] and usage in h.conversation()
        assert usage in h.window.composer.editor.toolTip()
    h.settle()
    assert len(requests(h)) == before


def test_model_without_a_route_lists_routes_with_price_and_cache_rule(harness: Harness) -> None:
    h = harness
    before = len(requests(h))
    h.type_and_send("/model")
    h.qtbot.waitUntil(lambda: bool(notes(h)), timeout=TURN_TIMEOUT)
    text = notes(h)[-1]["text"]
    assert f"→ {ROUTE}" in text
    assert "per million tokens: $" in text and "cached input" in text
    assert "cache: automatic prefix cache in 64-token units" in text  # deepseek's rule
    assert "emulator/openai/gpt-5.5" in text
    assert h.window.status.route_key == ROUTE and len(requests(h)) == before


def test_compact_with_nothing_to_do_is_one_note(harness: Harness) -> None:
    h = harness
    h.type_and_send("Hello. [[words:20]]")
    h.wait_turn(1)
    h.qtbot.waitUntil(lambda: h.window.compaction_preview is not None, timeout=TURN_TIMEOUT)
    h.type_and_send("/compact")
    [note] = notes(h)
    assert note["level"] == "info" and note["text"].startswith("Nothing to compact yet: ")
    assert h.window.banners.banners == [], "no red error, no yellow warning: one note"
    assert h.window.compact_confirm is None


def test_an_unknown_command_says_so_and_keeps_the_text(harness: Harness) -> None:
    h = harness
    before = len(requests(h))
    h.type_and_send("/frobnicate the widgets")
    [note] = notes(h)
    assert note["text"].startswith("Unknown command /frobnicate. Known commands: /capability status,")
    assert note["level"] == "warning"
    assert h.window.composer.editor.toPlainText() == "/frobnicate the widgets"
    assert h.window.commands.handled[-1] == Problem(note["text"])
    h.settle()
    assert len(requests(h)) == before and not h.window.busy and h.finished == []


def test_a_double_slash_sends_a_literal_slash(harness: Harness) -> None:
    h = harness
    before = len(requests(h))
    h.type_and_send("//etc/hosts is the file I mean")
    assert h.wait_turn(1).error is None
    sent = requests(h)[before:]
    assert sent and b"/etc/hosts is the file I mean" in sent[0].body
    assert b"//etc/hosts" not in sent[0].body
    user_rows = [r for r in h.rows() if r.get("type") == "user"]
    assert user_rows[-1]["message"]["content"] == "/etc/hosts is the file I mean"


def test_typing_a_slash_offers_the_commands(harness: Harness) -> None:
    h = harness
    editor = h.window.composer.editor
    completer = h.window.slash_completer
    editor.setFocus()
    h.qtbot.keyClicks(editor, "/ca")
    h.qtbot.waitUntil(completer.popup().isVisible, timeout=5000)
    assert completer.completer.currentCompletion() == "/capability status"
    h.qtbot.keyClick(completer.popup(), Qt.Key.Key_Return)
    assert editor.toPlainText() == "/capability status"
    assert not completer.popup().isVisible()
    assert h.window.commands.handled == [], "picking a completion does not run it"
    h.qtbot.keyClick(editor, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert h.window.commands.handled == [Command("capability")]

    editor.clear()
    h.qtbot.keyClicks(editor, "/mo")
    h.qtbot.waitUntil(completer.popup().isVisible, timeout=5000)
    assert completer.completer.completionCount() == 2  # /model and /mode
    editor.clear()
    h.qtbot.keyClicks(editor, "hello /mo")
    assert not completer.popup().isVisible()


def test_copy_as_curl_sends_the_previewed_body_with_credentials_redacted(harness: Harness) -> None:
    h = harness
    h.window.tabs.setCurrentIndex(TAB_PAYLOAD)
    view = h.window.payload_view
    h.qtbot.waitUntil(lambda: view.curl_button.isEnabled(), timeout=TURN_TIMEOUT)
    preview = view.main.preview
    view.curl_button.click()
    command = QGuiApplication.clipboard().text()
    words = shlex.split(command.replace("\\\n", " "))
    assert words[:4] == ["curl", "-X", str(preview["method"]).upper(), preview["url"]]
    assert words[words.index("--data-binary") + 1].encode() == preview["body"]
    headers = [words[i + 1] for i, w in enumerate(words) if w == "-H"]
    assert headers and all(
        not h_.lower().startswith(("authorization:", "x-api-key:")) or h_.endswith("<redacted>")
        for h_ in headers
    )


def test_curl_command_never_shows_a_credential() -> None:
    command = curl_command(
        {
            "method": "post",
            "url": "https://example.test/v1/models/m:generate?key=SECRET1&alt=sse",
            "headers": {
                "Authorization": "Bearer SECRET2",
                "x-api-key": "SECRET3",
                "content-type": "application/json",
            },
            "body": b'{"text": "it\'s $HOME `x`"}',
        }
    )
    assert "SECRET" not in command and command.count("<redacted>") == 3
    words = shlex.split(command.replace("\\\n", " "))
    assert words[words.index("--data-binary") + 1] == '{"text": "it\'s $HOME `x`"}'
