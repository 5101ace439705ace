"""The Usage tab: per request input, cache read/write, output, cost, hit ratio; totals."""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QHeaderView, QLabel, QTableView, QVBoxLayout, QWidget

from desktop.pi.cache_misses import MissCounter
from desktop.pi.money import format_cost
from desktop.ui.cache_miss_panel import CacheMissPanel
from desktop.ui.cost_chart import CostChart
from desktop.ui.glossary import tooltip
from desktop.ui.inert import named
from desktop.ui.usage_stats import UsageLine, UsageTotals, format_ratio, totals, usage_lines

#: The glossary entry behind each figure's column header (its tooltip; design G7).
HEADER_TERMS = {
    "Input": "input tokens",
    "Cached": "cached tokens",
    "Uncached": "uncached tokens",
    "Hit": "hit ratio",
    "Model": "route",
}
#: "Input" is every input token of the request, as everywhere else; cached and uncached beside it.
_HEADERS = ("#", "Time", "Model", "Input", "Cached", "Uncached", "Output", "Cost", "Hit")
#: The one column that gives way when the pane is narrow: elided, the whole name in its tooltip.
MODEL_COLUMN = 2


class UsageModel(QAbstractTableModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.lines: list[UsageLine] = []
        self.total = UsageTotals()
        self.misses = MissCounter()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.lines)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(_HEADERS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return _HEADERS[section]
        if role == Qt.ItemDataRole.ToolTipRole and _HEADERS[section] in HEADER_TERMS:
            return tooltip(HEADER_TERMS[_HEADERS[section]])
        return None

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if not index.isValid():
            return None
        line = self.lines[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.TextAlignmentRole and column >= 3:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and column == MODEL_COLUMN:
            return line.model
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        values = (
            index.row() + 1,
            time.strftime("%H:%M:%S", time.localtime(line.ts / 1000)) if line.ts else "",
            line.model,
            f"{line.prompt:,}",
            f"{line.cache_read:,}",
            f"{line.input + line.cache_write:,}",
            f"{line.output:,}",
            format_cost(line.cost) if line.cost > 0 or not line.prompt + line.output else "price unknown",
            format_ratio(line.hit_ratio),
        )
        return values[column]

    def set_rows(self, rows: Sequence[Mapping[str, Any]]) -> None:
        lines = usage_lines(rows)
        self.set_lines(lines, totals(lines))

    def _count_misses(self, lines: Sequence[UsageLine]) -> None:
        """Misses and re-cached tokens from the reported usage, one line at a time (P10)."""
        for line in lines:
            self.misses.add(line.model, line.ts, line.input, line.cache_read, line.cache_write)

    def set_lines(
        self, lines: Sequence[UsageLine], total: UsageTotals, misses: MissCounter | None = None
    ) -> None:
        """Usage already extracted and summed (on the worker, while the session was indexed),
        and its misses when counted there too: a copy, since this model goes on counting the
        rows a turn adds (counting 32,000 requests here held the first paint of a 100,000-row
        session for a tenth of a second, design X30)."""
        self.beginResetModel()
        self.lines = list(lines)
        self.total = total
        self.misses = MissCounter() if misses is None else copy.deepcopy(misses)
        if misses is None:
            self._count_misses(self.lines)
        self.endResetModel()

    def add_rows(self, rows: Sequence[Mapping[str, Any]]) -> None:
        new = usage_lines(rows)
        if not new:
            return
        start = len(self.lines)
        self.beginInsertRows(QModelIndex(), start, start + len(new) - 1)
        self.lines.extend(new)
        for line in new:
            self.total = self.total.plus(line)
        self._count_misses(new)
        self.endInsertRows()


def totals_text(total: UsageTotals, misses: MissCounter | None = None) -> str:
    return (
        f"<b>Session:</b> {total.requests} requests · input {total.prompt:,} ({total.cache_read:,} cached,"
        f" {total.input + total.cache_write:,} uncached, of which {total.cache_write:,} written to the cache)"
        f" · output {total.output:,} · cost {format_cost(total.cost)} · hit ratio {format_ratio(total.hit_ratio)}"
        + (f" · {misses.text()}" if misses is not None else "")
    )


#: Rows QHeaderView reads to size a column to its contents (Qt's default is 1,000).
RESIZE_PRECISION = 100


class UsageView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("usageView")
        self.model = UsageModel(self)
        self.summary = named(QLabel(), "usageTotals")
        self.summary.setWordWrap(True)
        self.summary.setToolTip(
            "Hit ratio = cache read ÷ (input + cache read + cache write): the share of the prompt served from the cache."
        )
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.verticalHeader().setVisible(False)
        self.table.setAlternatingRowColors(True)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # Size columns from the rows around the visible ones, not from every request of a
        # 100,000-row session (seconds of data() calls on the GUI thread, design G9).
        self.table.horizontalHeader().setResizeContentsPrecision(RESIZE_PRECISION)
        # The model name gives way in a narrow pane; every figure stays whole (design G7).
        self.table.horizontalHeader().setSectionResizeMode(MODEL_COLUMN, QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setStretchLastSection(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        self.cache_misses = CacheMissPanel()  # the causes `status` names (design P13)
        layout.addWidget(self.cache_misses)
        self.chart = CostChart()
        layout.addWidget(self.chart)
        layout.addWidget(self.table)
        self._pending: Sequence[Mapping[str, Any]] | None = None
        self._refresh()

    def set_rows(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Summing a long session costs a pass over every row: done when the tab is first shown."""
        self._pending = rows
        if self.isVisible():
            self._load()

    def set_lines(
        self, lines: Sequence[UsageLine], total: UsageTotals, misses: MissCounter | None = None
    ) -> None:
        """A long session's usage, extracted (and its misses counted) on the worker: no pass
        over the rows here."""
        self._pending = None
        self.model.set_lines(lines, total, misses)
        self._refresh()

    def _load(self) -> None:
        rows, self._pending = self._pending, None
        if rows is not None:
            self.model.set_rows(rows)
            self._refresh()

    def showEvent(self, event: QShowEvent) -> None:
        self._load()
        super().showEvent(event)

    def add_rows(self, rows: Sequence[Mapping[str, Any]]) -> None:
        if self._pending is not None:
            self._pending = [*self._pending, *rows]
            return
        before = len(self.model.lines)
        self.model.add_rows(rows)
        if len(self.model.lines) == before:
            return  # no usage among them: the table (and its column sizing) is left alone
        self._refresh()
        self.table.scrollToBottom()

    def set_cache_summary(self, summary: Mapping[str, Any] | None) -> None:
        if self.cache_misses.set_summary(summary):
            self._refresh()  # the panel names the misses now, as `status` does (design P13)

    def total(self) -> Any:
        self._load()
        return self.model.total

    def _refresh(self) -> None:
        misses = None if self.cache_misses.shown else self.model.misses
        self.summary.setText(totals_text(self.model.total, misses))
        self.chart.set_lines(self.model.lines)
