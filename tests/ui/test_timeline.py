"""The timeline model, its filter and the window's reaction to rows (no worker thread here)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from desktop.ui import rowinfo
from desktop.ui.main_window import TAB_DIFF, TAB_MESSAGE, TAB_USAGE, MainWindow
from desktop.ui.messages import DecodedRows, SessionOpened, ShownSession
from desktop.ui.timeline_model import KIND_ROLE, ROW_ROLE, TimelineFilter, TimelineModel
from tests.ui.synthetic import assistant_row, session_rows, system_row, user_row
from tests.ui.test_readable_window import proxy_index


def visible_ids(proxy: TimelineFilter) -> list[str]:
    return [proxy.index(i, 0).data(ROW_ROLE)["id"] for i in range(proxy.rowCount())]


@pytest.fixture
def proxy(qtbot) -> TimelineFilter:
    model = TimelineModel()
    proxy = TimelineFilter()
    proxy.setSourceModel(model)
    model.set_rows(session_rows(12))
    return proxy


def test_system_rows_are_hidden_until_toggled(proxy: TimelineFilter) -> None:
    model = proxy.timeline
    assert model.count_hidden_kinds() == 2
    assert proxy.hidden_system_rows() == 2
    assert proxy.rowCount() == model.rowCount() - 2
    assert not any(i.startswith("s") for i in visible_ids(proxy))
    proxy.set_show_hidden(True)
    assert proxy.rowCount() == model.rowCount()
    assert proxy.hidden_system_rows() == 0
    ids = visible_ids(proxy)
    assert ids.index("s5") == ids.index("u5") - 1


def test_kind_filters_and_search_narrow_the_rows(proxy: TimelineFilter) -> None:
    proxy.set_kind_visible(rowinfo.TOOL, False)
    assert all(proxy.index(i, 0).data(KIND_ROLE) != rowinfo.TOOL for i in range(proxy.rowCount()))
    proxy.set_kind_visible(rowinfo.TOOL, True)
    proxy.set_search("number 7")
    assert visible_ids(proxy) == ["u7", "a7"]
    proxy.set_search("")
    assert proxy.filtered_out() == 2


def test_anchored_rows_go_before_their_user_row_and_streaming_is_the_last_row(qtbot) -> None:
    model = TimelineModel()
    model.set_rows([user_row("u0", "a"), assistant_row("a0", "b")])
    model.append_rows([user_row("u1", "c")])
    model.append_rows([system_row("s1", {"x": "y"}, before="u1")])
    assert [r["id"] for r in model.rows] == ["u0", "a0", "s1", "u1"]
    model.set_streaming({"role": "assistant", "content": [{"type": "text", "text": "partial answer"}]})
    assert model.rowCount() == 5
    assert model.index(4).data(Qt.ItemDataRole.DisplayRole) == "partial answer"
    assert model.index(4).data(KIND_ROLE) == rowinfo.STREAMING
    model.set_streaming(
        {"role": "assistant", "content": [{"type": "text", "text": "partial answer, longer"}]}
    )
    assert model.index(4).data(Qt.ItemDataRole.DisplayRole) == "partial answer, longer"
    model.set_streaming(None)
    model.append_rows([assistant_row("a1", "done")])
    assert model.rowCount() == 5 and model.rows[-1]["id"] == "a1"


def test_window_notice_toggle_and_section_diff(window: MainWindow, qtbot) -> None:
    rows = session_rows(12)
    window.on_session_opened(SessionOpened(ShownSession("/tmp/x.jsonl", "/tmp"), DecodedRows(rows)))
    assert "2 hidden system rows" in window.hidden_notice.text()
    window.hidden_notice.linkActivated.emit("show")
    assert window.hidden_action.isChecked()
    assert "Showing 2 hidden system rows" in window.hidden_notice.text()
    window.view.setCurrentIndex(proxy_index(window, "s5"))
    assert window.tabs.currentIndex() == TAB_DIFF
    diff = window.diff_view.current
    assert diff is not None and [c.name for c in diff.changes] == ["guidance"]
    assert "AGENTS.md revision 5" in window.diff_view.toPlainText()
    window.view.setCurrentIndex(proxy_index(window, "u5"))  # a message row: back to the Message tab
    assert window.tabs.currentIndex() == TAB_MESSAGE
    window.view.setCurrentIndex(proxy_index(window, "s5"))
    window.hidden_action.trigger()  # Ctrl+H's action
    assert not window.filter.show_hidden
    window.tabs.setCurrentIndex(TAB_USAGE)
    assert window.usage_view.model.rowCount() == 12
    assert window.usage_view.model.total.requests == 12
    pixmap = window.grab()
    assert not pixmap.isNull()


def test_shortcuts_are_bound(window: MainWindow) -> None:
    """As the menus list them (and the help page shows them)."""
    assert {
        "New Session": "Ctrl+N",
        "Open Session": "Ctrl+O",
        "Compact": "Ctrl+Shift+K",
        "Show Hidden System Rows": "Ctrl+H",
        "Find": "Ctrl+F",
        "Send": "Ctrl+Return",
        "Stop": "Esc",
        "Quit": "Ctrl+Q",
    }.items() <= dict(window.shortcuts()).items()
