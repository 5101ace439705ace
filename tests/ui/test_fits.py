"""Nothing the user needs is cut off (design G7): every tab at 1280x800, 1440x900 and 1920x1080.

The real window with a Claude Code session (usage with costs, a what-if replay): each table's
column headers and the values on screen fit their columns, every column starts inside the
view (What-if's Cost column included), and the route box shows its whole route. A cell may
elide only when its tooltip carries the full value.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QApplication, QComboBox, QStyle, QTableView

from tests.ui.conftest import Harness
from tests.ui.test_window_inspect import ROUTE, TIMEOUT, copy

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SIZES = ((1280, 800), (1440, 900), (1920, 1080))


def padding(table: QTableView) -> int:
    """The room Qt's item delegate leaves beside a cell's text (the focus frame margin, both sides)."""
    style = table.style()
    return 2 * (style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, table) + 1)


@pytest.fixture
def harness(qtbot: Any, tmp_path: Path, qsettings_isolated: Path) -> Iterator[Harness]:
    h = Harness(qtbot, tmp_path, route=ROUTE, data=tmp_path / "data")
    yield h
    h.close()


def cut_cells(table: QTableView) -> list[str]:
    """Headers and on-screen values that do not fit, or columns that start outside the view."""
    problems: list[str] = []
    model = table.model()
    header = table.horizontalHeader()
    width = table.viewport().width()
    metrics = table.fontMetrics()
    pad = padding(table)
    for column in range(model.columnCount()):
        if header.isSectionHidden(column):
            continue
        name = str(model.headerData(column, Qt.Orientation.Horizontal))
        left = header.sectionViewportPosition(column)
        size = header.sectionSize(column)
        if left < 0 or left + min(size, metrics.horizontalAdvance(name) + pad) > width:
            problems.append(f"column {name!r} outside the view ({left}+{size} > {width})")
            continue
        if header.fontMetrics().horizontalAdvance(name) > size:  # a header section pads itself
            problems.append(f"header {name!r} cut ({size}px)")
        for row in range(model.rowCount()):
            if table.visualRect(model.index(row, column)).isEmpty():
                continue
            index = model.index(row, column)
            text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
            tip = str(index.data(Qt.ItemDataRole.ToolTipRole) or "")
            if metrics.horizontalAdvance(text) + pad > size and text not in tip:
                problems.append(f"{name} value {text!r} cut ({size}px)")
    return problems


def combo_cut(combo: QComboBox) -> bool:
    return combo.width() < combo.sizeHint().width() and combo.currentText() not in combo.toolTip()


def test_every_tab_shows_whole_columns_at_the_three_sizes(harness: Harness) -> None:
    h = harness
    path = copy(FIXTURES / "claude_code" / "basic.jsonl", h.tmp / "cc" / "basic.jsonl")
    h.start(path)
    window = h.window
    tabs = window.tabs
    whatif = window.inspect.whatif
    tabs.setCurrentWidget(whatif)
    h.qtbot.waitUntil(lambda: whatif.table.rowCount() > 0, timeout=TIMEOUT)
    problems: list[str] = []
    for width, height in SIZES:
        window.resize(width, height)
        for index in range(tabs.count()):
            if not tabs.isTabVisible(index):
                continue
            tabs.setCurrentIndex(index)
            QApplication.processEvents()
            for table in tabs.currentWidget().findChildren(QTableView):
                if table.isVisible() and table.model() is not None and table.model().rowCount():
                    table.scrollToTop()
                    QApplication.processEvents()
                    problems += [f"{width}x{height} {tabs.tabText(index)}: {p}" for p in cut_cells(table)]
        if combo_cut(window.route_combo):
            problems.append(f"{width}x{height}: route box shows {window.route_combo.currentText()!r} cut")
    assert problems == [], "\n".join(problems)


def test_whatif_cost_column_is_on_screen_at_1280x800(harness: Harness) -> None:
    h = harness
    path = copy(FIXTURES / "claude_code" / "basic.jsonl", h.tmp / "cc" / "basic.jsonl")
    h.start(path)
    window = h.window
    window.resize(1280, 800)
    whatif = window.inspect.whatif
    window.tabs.setCurrentWidget(whatif)
    h.qtbot.waitUntil(lambda: whatif.table.rowCount() > 0, timeout=TIMEOUT)
    QApplication.processEvents()
    table = whatif.table
    columns = [str(table.horizontalHeaderItem(c).text()) for c in range(table.columnCount())]
    cost = next(c for c, name in enumerate(columns) if name.lower().startswith("cost"))
    header = table.horizontalHeader()
    assert header.sectionViewportPosition(cost) + header.sectionSize(cost) <= table.viewport().width()
    assert table.horizontalScrollBarPolicy() != Qt.ScrollBarPolicy.ScrollBarAlwaysOn
    assert isinstance(table, QAbstractItemView)


def test_whatif_shows_every_row_on_one_line_at_1280x800(harness: Harness) -> None:
    h = harness
    path = copy(FIXTURES / "claude_code" / "basic.jsonl", h.tmp / "cc" / "basic.jsonl")
    h.start(path)
    window = h.window
    window.resize(1280, 800)
    whatif = window.inspect.whatif
    window.tabs.setCurrentWidget(whatif)
    h.qtbot.waitUntil(lambda: whatif.table.rowCount() == 9, timeout=TIMEOUT)
    QApplication.processEvents()
    table = whatif.table
    last = table.visualRect(table.model().index(table.rowCount() - 1, 0))
    assert not last.isEmpty() and last.bottom() <= table.viewport().height()
    assert not table.wordWrap()
    route = table.item(0, 0)
    assert route.text() in route.toolTip()


def test_route_box_shows_the_whole_route_at_1280x800(harness: Harness) -> None:
    h = harness
    h.start()
    window = h.window
    window.resize(1280, 800)
    QApplication.processEvents()
    combo = window.route_combo
    assert combo.currentText() == "anthropic/claude-opus-5-5 (emulator)"
    assert combo.width() >= combo.sizeHint().width()
    tip = str(combo.itemData(combo.currentIndex(), Qt.ItemDataRole.ToolTipRole))
    assert "anthropic-messages" in tip and "offline emulator" in tip
