"""The transcript timeline: a lazy list model over journal rows, and its filter (SPEC G1).

Like Anki's browser table, the model holds only references to the raw row dicts (already
parsed by the journal reader) plus one byte per row for its kind; everything a view shows is
computed inside ``data()`` for the rows on screen and cached by row id. Filtering by kind and
hiding system rows read that byte array, so a 100,000-row session filters without touching
the row dicts; only a text search reads them.

Rows are kept in *model order* (what the model sees): a system row anchored ``before`` a user
row is inserted in front of it when it arrives. A streaming assistant reply is one virtual
row at the end, replaced when the real assistant row is journaled.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)

from desktop.ui import rowinfo

KIND_ROLE: Final = Qt.ItemDataRole.UserRole + 1
ROW_ROLE: Final = Qt.ItemDataRole.UserRole + 2
TIME_ROLE: Final = Qt.ItemDataRole.UserRole + 3
USAGE_ROLE: Final = Qt.ItemDataRole.UserRole + 4
ID_ROLE: Final = Qt.ItemDataRole.UserRole + 5
ANCHORED_ROLE: Final = Qt.ItemDataRole.UserRole + 6

_CACHE_LIMIT = 4096
AnyIndex = QModelIndex | QPersistentModelIndex


class TimelineModel(QAbstractListModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[Mapping[str, Any]] = []
        self._kinds = bytearray()
        self._cache: dict[str, tuple[str, str]] = {}
        self._search: dict[str, str] = {}
        self._streaming: dict[str, Any] | None = None

    # --- the Qt model -------------------------------------------------------------------------

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        if parent.isValid():
            return 0
        return len(self._rows) + (1 if self._streaming is not None else 0)

    def row_at(self, position: int) -> Mapping[str, Any] | None:
        if 0 <= position < len(self._rows):
            return self._rows[position]
        if position == len(self._rows) and self._streaming is not None:
            return self._streaming
        return None

    def kind_at(self, position: int) -> int:
        if 0 <= position < len(self._kinds):
            return self._kinds[position]
        return rowinfo.STREAMING

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self.row_at(index.row())
        if row is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(row)[0]
        if role == KIND_ROLE:
            return self.kind_at(index.row())
        if role == TIME_ROLE:
            return self._display(row)[1]
        if role == ROW_ROLE:
            return row
        if role == ID_ROLE:
            return row.get("id")
        if role == USAGE_ROLE:
            return rowinfo.row_usage(row)
        if role == ANCHORED_ROLE:
            return bool(row.get("before"))
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{row.get('type')} row {row.get('id', '')}"
        return None

    def _display(self, row: Mapping[str, Any]) -> tuple[str, str]:
        if row is self._streaming:
            return rowinfo.row_summary(row), "…"
        key = str(row.get("id"))
        cached = self._cache.get(key)
        if cached is None:
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            cached = (rowinfo.row_summary(row), rowinfo.row_time(row))
            self._cache[key] = cached
        return cached

    # --- content ------------------------------------------------------------------------------

    @property
    def rows(self) -> Sequence[Mapping[str, Any]]:
        return self._rows

    def set_rows(self, rows_in_model_order: Sequence[Mapping[str, Any]]) -> None:
        self.beginResetModel()
        self._rows = list(rows_in_model_order)
        kind = rowinfo.row_kind
        self._kinds = bytearray([kind(r) for r in self._rows])
        self._cache.clear()
        self._search.clear()
        self._streaming = None
        self.endResetModel()

    def append_rows(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Add journaled rows; a system row anchored before a present row goes in front of it."""
        tail: list[Mapping[str, Any]] = []
        for row in rows:
            position = self._anchor_position(row)
            if position is None:
                tail.append(row)
                continue
            self._insert(position, [row])
        if tail:
            self._insert(len(self._rows), tail)

    def _anchor_position(self, row: Mapping[str, Any]) -> int | None:
        if row.get("type") != "system" or not isinstance(row.get("before"), str):
            return None
        target = row["before"]
        # Anchors point at the turn's user row, written just before: search from the end.
        for position in range(len(self._rows) - 1, -1, -1):
            if self._rows[position].get("id") == target:
                return position
        return None

    def _insert(self, position: int, rows: list[Mapping[str, Any]]) -> None:
        self.beginInsertRows(QModelIndex(), position, position + len(rows) - 1)
        self._rows[position:position] = rows
        self._kinds[position:position] = bytes(rowinfo.row_kind(r) for r in rows)
        self.endInsertRows()

    def set_streaming(self, message: Mapping[str, Any] | None) -> None:
        """Show (or update, or remove) the in-progress assistant reply as the last row."""
        end = len(self._rows)
        if message is None:
            if self._streaming is not None:
                self.beginRemoveRows(QModelIndex(), end, end)
                self._streaming = None
                self.endRemoveRows()
            return
        row = {"type": "streaming", "id": "<streaming>", "message": dict(message)}
        if self._streaming is None:
            self.beginInsertRows(QModelIndex(), end, end)
            self._streaming = row
            self.endInsertRows()
        else:
            self._streaming = row
            index = self.index(end)
            self.dataChanged.emit(index, index, [Qt.ItemDataRole.DisplayRole])

    # --- counts and search ------------------------------------------------------------------

    def count_kind(self, kind: int) -> int:
        return self._kinds.count(kind)

    def state_positions(self, before: int) -> list[int]:
        """Positions of system and compaction rows before ``before`` (found in the kind bytes)."""
        wanted = re.compile(bytes([ord("["), rowinfo.SYSTEM, rowinfo.COMPACTION, ord("]")]))
        return [m.start() for m in wanted.finditer(self._kinds, 0, before)]

    def search_text(self, position: int) -> str:
        row = self.row_at(position)
        if row is None:
            return ""
        if row is self._streaming:
            return rowinfo.row_search_text(row)
        key = str(row.get("id"))
        text = self._search.get(key)
        if text is None:
            text = rowinfo.row_search_text(row)
            self._search[key] = text
        return text

    def position_of(self, row_id: str) -> int | None:
        for position in range(len(self._rows) - 1, -1, -1):
            if self._rows[position].get("id") == row_id:
                return position
        return None


class TimelineFilter(QSortFilterProxyModel):
    """Hidden system rows behind a toggle, per-kind filters and a text search."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._show_hidden = False
        self._kinds: set[int] = set(rowinfo.FILTER_KINDS)
        self._needle = ""
        self._accept = bytes(self._acceptance())
        self.setDynamicSortFilter(False)

    def _acceptance(self) -> list[int]:
        """One flag per kind code: does this kind pass the kind filters?"""
        flags = []
        for kind in range(max(rowinfo.KIND_NAMES) + 1):
            bucket = rowinfo.filter_kind(kind)
            visible = bucket in self._kinds
            if bucket == rowinfo.SYSTEM and not self._show_hidden:
                visible = False
            flags.append(1 if visible else 0)
        return flags

    @property
    def timeline(self) -> TimelineModel:
        source = self.sourceModel()
        assert isinstance(source, TimelineModel)
        return source

    @property
    def show_hidden(self) -> bool:
        return self._show_hidden

    @property
    def kinds(self) -> frozenset[int]:
        return frozenset(self._kinds)

    @property
    def needle(self) -> str:
        return self._needle

    def _refilter(self) -> None:
        self._accept = bytes(self._acceptance())
        if hasattr(self, "beginFilterChange"):  # Qt 6.9+: the non-deprecated pair
            self.beginFilterChange()
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self.invalidateRowsFilter()

    def set_show_hidden(self, show: bool) -> None:
        if show != self._show_hidden:
            self._show_hidden = show
            self._refilter()

    def set_kind_visible(self, kind: int, visible: bool) -> None:
        before = set(self._kinds)
        if visible:
            self._kinds.add(kind)
        else:
            self._kinds.discard(kind)
        if self._kinds != before:
            self._refilter()

    def set_search(self, text: str) -> None:
        needle = text.strip().lower()
        if needle != self._needle:
            self._needle = needle
            self._refilter()

    def setSourceModel(self, source: Any) -> None:
        assert isinstance(source, TimelineModel)
        self._source = source
        super().setSourceModel(source)

    def filterAcceptsRow(self, source_row: int, source_parent: AnyIndex) -> bool:
        # Called once per row on every refilter: keep it to a byte lookup unless searching.
        kinds = self._source._kinds
        kind = kinds[source_row] if source_row < len(kinds) else rowinfo.STREAMING
        if not self._accept[kind]:
            return False
        return not self._needle or self._needle in self._source.search_text(source_row)

    def hidden_system_rows(self) -> int:
        return 0 if self._show_hidden else self.timeline.count_kind(rowinfo.SYSTEM)

    def filtered_out(self) -> int:
        return self.timeline.rowCount() - self.rowCount()
