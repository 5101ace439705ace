"""Nothing the user needs is cut off (design G7, G16): every tab and dialog at 1280x800,
1440x900 and 1920x1080.

The real window with a Claude Code session (usage with costs, a what-if replay): each table's
and tree's column headers and the values on screen fit their columns, every column starts
inside the view (What-if's Cost column included), every selector shows its whole choice, and
a status message never runs under the session label or the context meter. A cell, a selector
or a message may elide only when its tooltip carries the full value.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QDialog,
    QStyle,
    QStyleOptionComboBox,
    QTableView,
    QTreeWidget,
    QTreeWidgetItemIterator,
    QWidget,
)

from tests.ui.conftest import Harness
from tests.ui.test_window_inspect import ROUTE, TIMEOUT, copy

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SIZES = ((1280, 800), (1440, 900), (1920, 1080))


def padding(table: QAbstractItemView) -> int:
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
    """The choice shown does not fit the box's text field, and its tooltip does not hold it."""
    option = QStyleOptionComboBox()
    combo.initStyleOption(option)
    field = combo.style().subControlRect(
        QStyle.ComplexControl.CC_ComboBox, option, QStyle.SubControl.SC_ComboBoxEditField, combo
    )
    text = combo.currentText()
    return (
        combo.fontMetrics().horizontalAdvance(text) > field.width()
        and html.escape(text, quote=False) not in combo.toolTip()
    )


def cut_tree(tree: QTreeWidget) -> list[str]:
    """A tree's headers and on-screen values that do not fit their columns (nor their tooltips)."""
    problems: list[str] = []
    header = tree.header()
    metrics = tree.fontMetrics()
    for column in range(tree.columnCount()):
        if header.isSectionHidden(column):
            continue
        name = tree.headerItem().text(column)
        size = header.sectionSize(column)
        if header.fontMetrics().horizontalAdvance(name) > size:  # a header section pads itself
            problems.append(f"header {name!r} cut ({size}px)")
        if header.sectionViewportPosition(column) + min(size, 40) > tree.viewport().width():
            problems.append(f"column {name!r} outside the view")
    iterator = QTreeWidgetItemIterator(tree)
    while (item := iterator.value()) is not None:
        iterator += 1
        for column in range(tree.columnCount()):
            rect = tree.visualItemRect(item)
            if rect.isEmpty() or rect.top() > tree.viewport().height():
                continue
            text, tip = item.text(column), item.toolTip(column)
            room = header.sectionSize(column) - (
                tree.indentation() * (1 + _depth(item)) if column == 0 else 8
            )
            if text and metrics.horizontalAdvance(text) > room and text not in tip:
                problems.append(f"{tree.headerItem().text(column)} value {text!r} cut")
    return problems


def _depth(item: Any) -> int:
    depth = 0
    while (item := item.parent()) is not None:
        depth += 1
    return depth


def cut_widgets(root: QWidget) -> list[str]:
    """Every visible table, tree and selector under ``root`` that cuts what it shows."""
    problems: list[str] = []
    for table in root.findChildren(QTableView):
        if table.isVisible() and table.model() is not None and table.model().rowCount():
            table.scrollToTop()
            QApplication.processEvents()
            problems += cut_cells(table)
    for tree in root.findChildren(QTreeWidget):
        if tree.isVisible():
            problems += cut_tree(tree)
    for combo in root.findChildren(QComboBox):
        if combo.isVisible() and combo_cut(combo):
            problems.append(
                f"selector {combo.objectName() or combo.accessibleName()!r} shows {combo.currentText()!r} cut"
            )
    return problems


def status_cut(window: Any) -> list[str]:
    """A status message that runs under the permanent widgets, or is cut without its tooltip."""
    bar = window.statusBar()
    message = bar.currentMessage()
    permanent = [w for w in (window.session_label, window.context_meter) if w.isVisible()]
    limit = min(w.geometry().left() for w in permanent)
    problems: list[str] = []
    for widget in permanent:
        if widget.width() < widget.sizeHint().width():
            problems.append(f"{widget.objectName() or type(widget).__name__} squeezed")
    if bar.fontMetrics().horizontalAdvance(message) + 6 > limit:
        shown = getattr(bar, "shown_message", lambda: message)()
        painted = bar.fontMetrics().horizontalAdvance(shown)
        if (
            message not in bar.toolTip().replace("<br>", "\n")
            or not shown.endswith("…")
            or 6 + painted > limit
        ):
            problems.append(f"message runs under the session label at x={limit}: {message[:40]!r}…")
    return problems


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
            problems += [
                f"{width}x{height} {tabs.tabText(index)}: {p}" for p in cut_widgets(tabs.currentWidget())
            ]
        if combo_cut(window.route_combo):
            problems.append(f"{width}x{height}: route box shows {window.route_combo.currentText()!r} cut")
        # Outside the tabs: the toolbar's selectors and the transcript's branch picker.
        combos = [c for c in window.findChildren(QComboBox) if c.isVisible() and not tabs.isAncestorOf(c)]
        assert combos
        problems += [f"{width}x{height}: selector {c.objectName()!r} cut" for c in combos if combo_cut(c)]
    assert problems == [], "\n".join(problems)


def test_status_messages_never_run_under_the_session_label(harness: Harness) -> None:
    h = harness
    path = copy(
        FIXTURES / "claude_code" / "basic.jsonl", h.tmp / "a-workspace-with-a-long-name" / "basic.jsonl"
    )
    h.start(path)
    window = h.window
    long = "Stopped (error): " + "the provider closed the connection before the reply ended; " * 4 + "END"
    problems: list[str] = []
    for width, height in SIZES:
        window.resize(width, height)
        for message in (long, "Done."):
            window.statusBar().showMessage(message)
            QApplication.processEvents()
            problems += [f"{width}x{height}: {p}" for p in status_cut(window)]
    assert problems == [], "\n".join(problems)
    # Painted elided, the whole message in the tooltip, nothing painted where the label is.
    bar = window.statusBar()
    window.resize(1280, 800)
    bar.showMessage(long)
    QApplication.processEvents()
    assert bar.shown_message().endswith("…") and "END" in bar.toolTip()  # type: ignore[attr-defined]


def test_every_dialog_shows_whole_columns_at_the_three_sizes(harness: Harness, home: Path) -> None:
    copy(FIXTURES / "claude_code" / "basic.jsonl", home / ".claude/projects/-home-dev-projects-demo/c.jsonl")
    h = harness
    h.start()
    window = h.window
    problems: list[str] = []
    for width, height in SIZES:
        window.resize(width, height)
        QApplication.processEvents()
        window.browse_action.trigger()
        browser = window.inspect.browser
        assert browser is not None
        h.qtbot.waitUntil(lambda b=browser: len(b.session_paths()) >= 1, timeout=TIMEOUT)
        window.show_accounts()
        window.show_help()
        window.session_choices.edit_new_session_defaults()
        dialogs = [d for d in QApplication.topLevelWidgets() if isinstance(d, QDialog) and d.isVisible()]
        titles = {d.windowTitle() for d in dialogs}
        assert "Browse sessions" in titles and len(dialogs) >= 4, titles
        for dialog in dialogs:
            if dialog.width() > width or dialog.height() > height:
                problems.append(f"{width}x{height}: {dialog.windowTitle()!r} larger than the window")
            QApplication.processEvents()
            problems += [f"{width}x{height} {dialog.windowTitle()!r}: {p}" for p in cut_widgets(dialog)]
            dialog.close()
    assert problems == [], "\n".join(problems)


def test_whatif_shows_the_cost_column_and_every_row_on_one_line_at_1280x800(harness: Harness) -> None:
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
    columns = [str(table.horizontalHeaderItem(c).text()) for c in range(table.columnCount())]
    cost = next(c for c, name in enumerate(columns) if name.lower().startswith("cost"))
    header = table.horizontalHeader()
    assert header.sectionViewportPosition(cost) + header.sectionSize(cost) <= table.viewport().width()
    assert table.horizontalScrollBarPolicy() != Qt.ScrollBarPolicy.ScrollBarAlwaysOn
    assert isinstance(table, QAbstractItemView)
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
