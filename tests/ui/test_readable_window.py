"""The window people can read (design G7, X4): layout at 1280x800, rendered messages,
conversation mode, banners, glossary tooltips and the help page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QComboBox, QLabel, QPushButton, QToolBar

from desktop.ui.accounts_dialog import AccountsDialog
from desktop.ui.activation_view import LABEL_TERMS, render_activation
from desktop.ui.glossary import GLOSSARY
from desktop.ui.main_window import MINIMUM_SIZE, TAB_MESSAGE, TAB_ROW, MainWindow
from desktop.ui.messages import DecodedRows, SessionOpened, ShownSession, TurnFinished
from desktop.ui.payload_view import SIDE_BY_SIDE_WIDTH
from desktop.ui.timeline_delegate import row_layout, row_tooltip, usage_hint
from desktop.ui.timeline_model import ROW_ROLE, USAGE_ROLE
from tests.cli.helpers import make_session
from tests.ui.conftest import TURN_TIMEOUT
from tests.ui.synthetic import assistant_row, session_rows, usage, user_row


def open_rows(window: MainWindow, rows: list[dict], path: str = "/home/me/work/chat.jsonl") -> None:
    window.on_session_opened(SessionOpened(ShownSession(path, "/home/me/work"), DecodedRows(rows)))


def proxy_index(window: MainWindow, row_id: str) -> QModelIndex:
    for i in range(window.shown.rowCount()):
        index = window.shown.index(i, 0)
        if index.data(ROW_ROLE)["id"] == row_id:
            return index
    raise AssertionError(row_id)


@pytest.mark.parametrize("width", [1024, 1280])
def test_timeline_text_keeps_room_at_every_width(window: MainWindow, qtbot, width: int) -> None:
    window.resize(width, 800)
    rows = [
        user_row("u1", "hello"),
        assistant_row("a1", "A long answer " * 20, u=usage(2100, 0, 0, 11, 0.00056)),
    ]
    open_rows(window, rows)
    qtbot.waitUntil(lambda: window.view.viewport().width() > 0)
    index = proxy_index(window, "a1")
    rect = window.view.visualRect(index)
    metrics = QFontMetrics(window.view.font())
    text, figures = row_layout(rect, metrics, usage_hint(index.data(USAGE_ROLE)))
    assert text.width() >= 200, (width, window.splitter.sizes(), rect)
    if width >= 1280:
        # At the default size the usage column fits beside the text.
        assert figures is not None and text.right() < figures.left()
    # At any width the tooltip carries the usage in words.
    assert "2,100 input tokens" in row_tooltip(index) and "$0.00056" in row_tooltip(index)


def test_title_names_the_session_and_minimum_size(window: MainWindow) -> None:
    open_rows(window, session_rows(3))
    assert window.windowTitle() == "chat.jsonl · work — Pi Desktop"
    assert (window.minimumWidth(), window.minimumHeight()) == MINIMUM_SIZE
    # Nothing forces the window wider than 1280 at its default size.
    assert window.minimumSizeHint().width() <= 1280 and window.width() == 1280


def test_message_tab_is_first_and_renders_the_selected_row(window: MainWindow) -> None:
    open_rows(
        window, [user_row("u1", "Please **fix** it"), assistant_row("a1", "## Done\n\n```python\nx = 1\n```")]
    )
    assert window.tabs.tabText(TAB_MESSAGE) == "Message" and window.tabs.currentIndex() == TAB_MESSAGE
    window.view.setCurrentIndex(proxy_index(window, "a1"))
    shown = window.message_view.browser.toPlainText()
    assert "Done" in shown and "##" not in shown and "x = 1" in shown
    window.message_view.raw_button.click()
    assert window.tabs.currentIndex() == TAB_ROW
    assert '"id": "a1"' in window.row_view.toPlainText()


def test_conversation_mode_renders_only_what_the_timeline_shows(window: MainWindow, qtbot) -> None:
    open_rows(window, session_rows(2000))
    qtbot.waitUntil(lambda: window.view.indexAt(window.view.viewport().rect().topLeft()).isValid())
    assert window.message_view.conversation.isChecked()  # on from the start (design X7)
    qtbot.waitUntil(lambda: bool(window.message_view.rows))
    first = [r["id"] for r in window.message_view.rows]
    assert 3 < len(first) < 120, len(first)
    assert first[-1] == window.shown.index(window.shown.rowCount() - 1, 0).data(ROW_ROLE)["id"]
    window.view.scrollToTop()
    qtbot.waitUntil(lambda: window.message_view.rows and window.message_view.rows[0]["id"] == "u0")
    assert "question number 0" in window.message_view.browser.toPlainText()
    assert len(window.message_view.rows) < 120


def test_errors_and_set_aside_lines_show_as_banners(window: MainWindow) -> None:
    window.on_message("error", "Could not open /tmp/broken.jsonl: line 3 is not JSON: b'\\xff' \udcff")
    banner = window.banners.banners[0]
    assert window.banners.isVisible() and banner.level == "error"
    assert banner.text.endswith("\\xff") and "Could not open /tmp/broken.jsonl" in banner.text
    diagnostics = ["line 4: not JSON", "line 9: torn"]
    window.on_session_opened(
        SessionOpened(ShownSession("/tmp/s.jsonl", "/tmp"), DecodedRows([]), diagnostics=diagnostics)
    )
    warning = window.banners.banners[0]
    assert (
        warning.level == "warning" and "2 lines set aside" in warning.text and "line 9: torn" in warning.text
    )
    window.on_turn_finished(TurnFinished("error", "HTTP 529 overloaded"))
    assert "HTTP 529 overloaded" in window.banners.banners[0].text


def test_every_toolbar_label_and_selector_is_explained(window: MainWindow) -> None:
    bar = window.findChild(QToolBar, "sessionToolbar")
    widgets = [
        w for w in bar.findChildren(QLabel) + bar.findChildren(QComboBox) + bar.findChildren(QPushButton)
    ]
    assert len(widgets) >= 8
    for widget in widgets:
        if isinstance(widget, QLabel) and not widget.text().strip():
            continue
        assert widget.toolTip(), widget.objectName() or widget.text()
    for combo in bar.findChildren(QComboBox):
        assert combo.accessibleName()
    labels = {w.text().strip().replace("&", ""): w for w in bar.findChildren(QLabel) if w.text().strip()}
    assert labels["Route"].buddy() is window.route_combo
    assert (
        "folded" in window.fallback_combo.toolTip().lower()
        and "attributed" in window.fallback_combo.toolTip().lower()
    )


def test_every_activation_label_has_a_glossary_tooltip() -> None:
    html = render_activation(
        {
            "valid": True,
            "why": "ok",
            "active": ["x"],
            "epoch": 2,
            "identity": "ab",
            "inputs": {"declarations": ["a"]},
            "policy": {"mode": "fixed", "fallback": "too many", "functions": 3, "estimatedTokens": 40},
        },
        dark=False,
    )
    labels = re.findall(r"<td valign='top'[^>]*>(.*?)</td>", html)
    assert len(labels) >= 13
    for label in labels:
        assert 'title="' in label, label
    assert all(key in GLOSSARY for key in LABEL_TERMS.values())


def test_help_page_opens_with_the_window_shortcuts(window: MainWindow) -> None:
    window.help_action.trigger()
    page = window.help_page
    assert page is not None and page.isVisible()
    text = page.browser.toPlainText()
    assert "What am I looking at?" in text
    assert "Ctrl+Shift+K" in text and "Ctrl+H" in text and "Show Hidden System Rows" in text


def test_controls_reachable_and_named(window: MainWindow) -> None:
    selectors = (window.route_combo, window.mode_combo, window.fallback_combo, window.compact_button)
    for widget in (
        *selectors,
        window.message_view.conversation,
        window.message_view.raw_button,
        window.search,
    ):
        assert widget.focusPolicy() & Qt.FocusPolicy.TabFocus, widget.objectName()
    for widget in (*selectors, window.message_view.conversation, window.message_view.browser):
        assert widget.accessibleName(), widget.objectName()


def test_a_session_with_a_bad_line_opens_with_a_banner_naming_it(harness, workspace: Path) -> None:
    """The real worker reads a real file: the set-aside line is named where the user looks."""
    path = make_session(workspace, "s.jsonl", "hello")
    with path.open("ab") as handle:
        handle.write(b'{"type": "user", "broken \xff\n')
    harness.window.open_path(path)
    harness.wait_open(path)
    harness.qtbot.waitUntil(lambda: bool(harness.window.banners.banners), timeout=TURN_TIMEOUT)
    text = "\n".join(b.text for b in harness.window.banners.banners)
    assert "s.jsonl" in text and "line" in text, text
    assert "\ufffd" not in text and "xff" in text  # the invalid byte escaped, never garbled


def test_accounts_table_keeps_every_column_in_view(qtbot) -> None:
    dialog = AccountsDialog(["anthropic", "openai"])
    qtbot.addWidget(dialog)
    dialog.show()
    long_source = "keyring: pi-desktop/anthropic/" + "a-very-long-account-name-" * 6
    dialog.show_accounts(
        [{"provider": "anthropic", "source": long_source, "fingerprint": "sha256:1a2b3c4d"}], "1 account"
    )
    qtbot.waitUntil(lambda: dialog.table.viewport().width() > 0)
    header = dialog.table.horizontalHeader()
    total = sum(header.sectionSize(i) for i in range(3))
    assert total <= dialog.table.viewport().width() + 1
    assert header.sectionSize(2) >= header.sectionSizeHint(2) - 1  # the fingerprint is whole
    assert dialog.table.item(0, 1).toolTip() == long_source


def test_route_comparison_stacks_when_narrow(window: MainWindow, qtbot) -> None:
    payload = window.payload_view
    window.tabs.setCurrentWidget(payload)
    qtbot.waitUntil(lambda: payload.width() > 0)
    assert payload.width() < SIDE_BY_SIDE_WIDTH  # beside the timeline at 1280x800
    assert payload.splitter.orientation() == Qt.Orientation.Vertical
    payload.resize(SIDE_BY_SIDE_WIDTH + 100, 600)
    assert payload.splitter.orientation() == Qt.Orientation.Horizontal


def test_conversation_mode_never_renders_the_whole_session_before_layout(window: MainWindow) -> None:
    open_rows(window, session_rows(3000))
    window.message_view.conversation.setChecked(False)
    window.message_view.conversation.setChecked(True)  # at once, before the batched layout ran
    assert 0 < len(window.message_view.rows) < 120
