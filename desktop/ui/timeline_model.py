"""The transcript timeline: a lazy list model over journal rows, and its filter (design G1, G9).

Like Anki's browser table, the model holds no rows of a long session: it holds the worker's
``RowIndex`` (per row: byte offset, length, kind byte, id) and reads and decodes a row from the
file only when a view asks for it (``data()`` for the rows on screen), keeping the recent ones.
Rows journaled while the window is open arrive as dicts and are kept as they are. Filtering by
kind and hiding system rows read the kind bytes, so a 100,000-row session filters without
touching a row; only a text search reads the rows.

Rows are kept in *model order* (what the model sees): a system row anchored ``before`` a user
row is inserted in front of it when it arrives. A streaming assistant reply is one virtual
row at the end, replaced when the real assistant row is journaled.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence
from itertools import compress
from typing import TYPE_CHECKING, Any, Final, overload

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)

from desktop.ui import rowinfo
from desktop.ui.inert import plain_tip
from desktop.ui.row_index import RowIndex, RowReader

if TYPE_CHECKING:  # the foreign readers load when a foreign session opens
    from desktop.ui.foreign_rows import ForeignRows

KIND_ROLE: Final = Qt.ItemDataRole.UserRole + 1
ROW_ROLE: Final = Qt.ItemDataRole.UserRole + 2
TIME_ROLE: Final = Qt.ItemDataRole.UserRole + 3
USAGE_ROLE: Final = Qt.ItemDataRole.UserRole + 4
ID_ROLE: Final = Qt.ItemDataRole.UserRole + 5
ANCHORED_ROLE: Final = Qt.ItemDataRole.UserRole + 6

_CACHE_LIMIT = 4096
AnyIndex = QModelIndex | QPersistentModelIndex
Ref = int | Mapping[str, Any]
"""A row of the timeline: an entry of the row index (read on demand), or a row held in memory."""


class TimelineRows(Sequence[Mapping[str, Any]]):
    """The timeline's rows as a sequence; each one is read when asked for."""

    def __init__(self, model: TimelineModel) -> None:
        self._model = model

    def __len__(self) -> int:
        return len(self._model._refs)

    @overload
    def __getitem__(self, position: int) -> Mapping[str, Any]: ...
    @overload
    def __getitem__(self, position: slice) -> list[Mapping[str, Any]]: ...
    def __getitem__(self, position: int | slice) -> Mapping[str, Any] | list[Mapping[str, Any]]:
        if isinstance(position, slice):
            return [self._model._resolve(ref) for ref in self._model._refs[position]]
        return self._model._resolve(self._model._refs[position])


class TimelineModel(QAbstractListModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._refs: list[Ref] = []
        self._ids: list[str | None] = []
        self._kinds = bytearray()
        self._reader: RowReader | ForeignRows | None = None
        self._cache: dict[str, tuple[str, str]] = {}
        self._search: dict[str, str] = {}
        self._streaming: dict[str, Any] | None = None
        self.index_shown: RowIndex | None = None

    # --- the Qt model -------------------------------------------------------------------------

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        if parent.isValid():
            return 0
        return len(self._refs) + (1 if self._streaming is not None else 0)

    def _resolve(self, ref: Ref) -> Mapping[str, Any]:
        if isinstance(ref, int):
            assert self._reader is not None
            return self._reader.row(ref)
        return ref

    def row_at(self, position: int) -> Mapping[str, Any] | None:
        if 0 <= position < len(self._refs):
            return self._resolve(self._refs[position])
        if position == len(self._refs) and self._streaming is not None:
            return self._streaming
        return None

    def kind_at(self, position: int) -> int:
        if 0 <= position < len(self._kinds):
            return self._kinds[position]
        return rowinfo.STREAMING

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        position = index.row()
        if role == KIND_ROLE:
            return self.kind_at(position)
        if role == ID_ROLE:
            return self._ids[position] if position < len(self._ids) else "<streaming>"
        row = self.row_at(position)
        if row is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(row)[0]
        if role == TIME_ROLE:
            return self._display(row)[1]
        if role == ROW_ROLE:
            return row
        if role == USAGE_ROLE:
            return rowinfo.row_usage(row)
        if role == ANCHORED_ROLE:
            return bool(row.get("before"))
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tip(f"{row.get('type')} row {row.get('id', '')}")
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
        """Every row in model order, each read on demand (a view, not a copy)."""
        return TimelineRows(self)

    @property
    def ids(self) -> Sequence[str | None]:
        return self._ids

    def set_index(self, index: RowIndex) -> None:
        """Show a session from its row index: no row is read until it is painted."""
        self._show(RowReader(index), list(range(len(index))), list(index.ids), index.kinds, index)

    def set_reader(self, reader: ForeignRows) -> None:
        """Show rows a reader builds when they are painted (a pi or Claude Code branch, X1); their
        ids come with the rows, nothing here looks them up."""
        self._show(reader, list(range(len(reader))), [None] * len(reader), reader.kinds)

    def set_rows(self, rows_in_model_order: Sequence[Mapping[str, Any]]) -> None:
        """Show rows held in memory (a session whose rows did not come with an index)."""
        kind = rowinfo.row_kind
        self._show(
            None,
            list(rows_in_model_order),
            [_row_id(r) for r in rows_in_model_order],
            [kind(r) for r in rows_in_model_order],
        )

    def _show(
        self,
        reader: RowReader | ForeignRows | None,
        refs: list[Ref],
        ids: list[str | None],
        kinds: bytes | list[int],
        index: RowIndex | None = None,
    ) -> None:
        self.beginResetModel()
        if self._reader is not None:
            self._reader.close()
        self._reader, self._refs, self._ids, self._kinds = reader, refs, ids, bytearray(kinds)
        self._cache.clear()
        self._search.clear()
        self._streaming = None
        self.index_shown = index
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
            self._insert(len(self._refs), tail)

    def _anchor_position(self, row: Mapping[str, Any]) -> int | None:
        if row.get("type") != "system" or not isinstance(row.get("before"), str):
            return None
        return self.position_of(row["before"])

    def _insert(self, position: int, rows: list[Mapping[str, Any]]) -> None:
        self.beginInsertRows(QModelIndex(), position, position + len(rows) - 1)
        self._refs[position:position] = rows
        self._ids[position:position] = [_row_id(r) for r in rows]
        self._kinds[position:position] = bytes(rowinfo.row_kind(r) for r in rows)
        self.endInsertRows()

    def set_streaming(self, message: Mapping[str, Any] | None) -> None:
        """Show (or update, or remove) the in-progress assistant reply as the last row."""
        end = len(self._refs)
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

    def count_hidden_kinds(self) -> int:
        """Rows the "show hidden rows" toggle governs: system rows, and the pi / Claude Code
        kinds that travel with them (reminders, meta, attachments, extension state)."""
        return sum(self._kinds.count(kind) for kind in rowinfo.HIDDEN_CODES)

    def state_positions(self, before: int) -> list[int]:
        """Positions of system and compaction rows before ``before`` (found in the kind bytes)."""
        wanted = re.compile(bytes([ord("["), rowinfo.SYSTEM, rowinfo.COMPACTION, ord("]")]))
        return [m.start() for m in wanted.finditer(self._kinds, 0, before)]

    def search_text(self, position: int) -> str:
        row = self.row_at(position)
        if row is None:
            return ""
        if row is self._streaming:
            return rowinfo.row_search_text(self._streaming)
        key = str(row.get("id"))
        text = self._search.get(key)
        if text is None:
            text = rowinfo.row_search_text(row)
            self._search[key] = text
        return text

    def position_of(self, row_id: str) -> int | None:
        ids = self._ids
        for position in range(len(ids) - 1, -1, -1):
            if ids[position] == row_id:
                return position
        return None


def _row_id(row: Mapping[str, Any]) -> str | None:
    value = row.get("id")
    return value if isinstance(value, str) else None


class TimelineFilter(QAbstractListModel):
    """Hidden system rows behind a toggle, per-kind filters and a text search.

    A flat list model in front of the timeline: a proxy in role, a list model in type. Its row
    mapping is computed in bulk from the model's kind bytes (a ``bytes.translate`` plus
    ``itertools.compress``), not with a Python callback per row as a ``QSortFilterProxyModel``
    subclass would: toggling hidden rows on a 100,000-row session costs a few milliseconds
    instead of a 200 ms pause. Appends are mapped incrementally; a filter change keeps the
    selection through the persistent indexes. The view does not see it directly but through
    ``ShownRows``, whose per-row calls stay in C++.
    """

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._show_hidden = False
        self._kinds: set[int] = set(rowinfo.FILTER_KINDS)
        self._needle = ""
        self._accept = self._acceptance()
        self._visible: list[int] = []  # source rows shown, ascending

    def _acceptance(self) -> bytes:
        """One flag per kind code (256 entries, a translate table): does this kind pass?"""
        flags = bytearray(256)
        for kind in range(max(rowinfo.KIND_NAMES) + 1):
            bucket = rowinfo.filter_kind(kind)
            flags[kind] = bucket in self._kinds and (bucket != rowinfo.SYSTEM or self._show_hidden)
        return bytes(flags)

    # --- mapping ------------------------------------------------------------------------------

    def _kind_bytes(self, first: int, last: int) -> bytes:
        source = self._source
        kinds = bytes(source._kinds[first : last + 1])
        missing = last + 1 - first - len(kinds)
        return kinds + bytes([rowinfo.STREAMING]) * max(0, missing)

    def _accepted(self, first: int, last: int) -> list[int]:
        """Source rows in [first, last] that pass, found without a per-row Python call."""
        if last < first:
            return []
        mask = self._kind_bytes(first, last).translate(self._accept)
        rows = list(compress(range(first, last + 1), mask))
        if self._needle:
            search = self._source.search_text
            rows = [r for r in rows if self._needle in search(r)]
        return rows

    def _remap(self) -> None:
        self._visible = self._accepted(0, self._source.rowCount() - 1)

    def _refilter(self) -> None:
        self._accept = self._acceptance()
        self.layoutAboutToBeChanged.emit()
        persistent = self.persistentIndexList()
        sources = [self.mapToSource(index) for index in persistent]
        self._remap()
        self.changePersistentIndexList(persistent, [self.mapFromSource(src) for src in sources])
        self.layoutChanged.emit()

    # --- the list model and its mapping to the timeline ---------------------------------------------

    def setSourceModel(self, source: TimelineModel) -> None:
        self.beginResetModel()
        self._source = source
        source.modelReset.connect(self._source_reset)
        source.rowsInserted.connect(self._source_inserted)
        source.rowsAboutToBeRemoved.connect(self._source_about_to_remove)
        source.rowsRemoved.connect(self._source_removed)
        source.dataChanged.connect(self._source_data_changed)
        self._remap()
        self.endResetModel()

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._visible)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._visible):
            return None
        return self._source.data(self._source.index(self._visible[index.row()], 0), role)

    def mapToSource(self, proxy_index: AnyIndex) -> QModelIndex:
        if not proxy_index.isValid() or not 0 <= proxy_index.row() < len(self._visible):
            return QModelIndex()
        return self._source.index(self._visible[proxy_index.row()], 0)

    def mapFromSource(self, source_index: AnyIndex) -> QModelIndex:
        if not source_index.isValid():
            return QModelIndex()
        row = source_index.row()
        position = bisect.bisect_left(self._visible, row)
        if position < len(self._visible) and self._visible[position] == row:
            return self.createIndex(position, 0)
        return QModelIndex()

    # --- following the source ------------------------------------------------------------------

    def _source_reset(self) -> None:
        self.beginResetModel()
        self._remap()
        self.endResetModel()

    def _source_inserted(self, parent: AnyIndex, first: int, last: int) -> None:
        count = last - first + 1
        position = bisect.bisect_left(self._visible, first)
        for i in range(position, len(self._visible)):
            self._visible[i] += count
        accepted = self._accepted(first, last)
        if accepted:
            self.beginInsertRows(QModelIndex(), position, position + len(accepted) - 1)
            self._visible[position:position] = accepted
            self.endInsertRows()

    def _source_about_to_remove(self, parent: AnyIndex, first: int, last: int) -> None:
        start = bisect.bisect_left(self._visible, first)
        stop = bisect.bisect_right(self._visible, last)
        self._removing = (start, stop)
        if stop > start:
            self.beginRemoveRows(QModelIndex(), start, stop - 1)

    def _source_removed(self, parent: AnyIndex, first: int, last: int) -> None:
        start, stop = self._removing
        count = last - first + 1
        del self._visible[start:stop]
        for i in range(start, len(self._visible)):
            self._visible[i] -= count
        if stop > start:
            self.endRemoveRows()

    def _source_data_changed(self, top_left: AnyIndex, bottom_right: AnyIndex, roles: Any = ()) -> None:
        for row in range(top_left.row(), bottom_right.row() + 1):
            proxy = self.mapFromSource(self._source.index(row, 0))
            if proxy.isValid():
                self.dataChanged.emit(proxy, proxy, roles)

    # --- the filter's API ---------------------------------------------------------------------------

    @property
    def timeline(self) -> TimelineModel:
        return self._source

    @property
    def show_hidden(self) -> bool:
        return self._show_hidden

    @property
    def kinds(self) -> frozenset[int]:
        return frozenset(self._kinds)

    @property
    def needle(self) -> str:
        return self._needle

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

    def hidden_system_rows(self) -> int:
        return 0 if self._show_hidden else self.timeline.count_hidden_kinds()

    def filtered_out(self) -> int:
        return self.timeline.rowCount() - self.rowCount()


class ShownRows(QSortFilterProxyModel):
    """The filter's rows as the timeline view gets them: a C++ model between the two (design G9).

    Qt's list layout asks its model for an index once per row. Asked of the Python filter, each
    ``index()`` checks ``rowCount()``, a Python call that needs the GIL; while the worker runs
    Python (reading a journal) every one of them waits for its turn, and laying out 100,000 rows
    stalled the window for up to a second and a half. This proxy has no filter and no sort and
    overrides none of Qt's methods, so its ``index()``, ``rowCount()`` and mapping are Qt's C++
    (the mapping of 100,000 rows is built in a few milliseconds); only ``data()`` of the rows
    painted reaches Python. Row *i* here is row *i* of the filter.
    """

    def __init__(self, rows: TimelineFilter, parent: Any = None) -> None:
        super().__init__(parent)
        self.setDynamicSortFilter(False)  # nothing to re-sort or re-filter when a row changes
        self.setSourceModel(rows)
        self.rows = rows

    def position(self, index: AnyIndex) -> int:
        """The timeline position (row of ``TimelineModel``) of one of the view's indexes; -1 if none."""
        return self.rows.mapToSource(self.mapToSource(index)).row()
