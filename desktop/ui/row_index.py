"""The timeline's row index: which journal line each row is, and its kind (design G1, G9, X26).

Like Anki's browser table, the window does not hold a long session's rows: it holds, per row
in model order, the journal row number, one byte for its kind and its id, and decodes a row
only when a view asks for it. The session file is parsed once when it opens: the journal
reader (``read_session``) keeps each accepted row as its line, and the index takes the kinds and
usage from the same decoded rows as they pass (its ``RowObserver``), so the rows the timeline
shows are exactly the rows the engine reads, by construction. The index is built on the worker
thread, then handed to the window as one immutable object; it shares the journal's lines (which
only grow: the rows it lists never change), so a 100,000-row session crosses the thread
boundary in constant time and costs the window a few megabytes. No Qt here.
"""

from __future__ import annotations

import gc
import os
import threading
from array import array
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from desktop.host.journal.lines import JournalRows
from desktop.host.journal.order import order_indices
from desktop.host.journal.reader import SessionLog, parse_lines, read_session
from desktop.pi.cache_misses import MissCounter
from desktop.ui.rowinfo import ASSISTANT, ERROR, TOOL, USER, row_kind
from desktop.ui.usage_stats import UsageLine, UsageTotals, totals, usage_line

_CACHE_ROWS = 4096


@dataclass(frozen=True, slots=True, eq=False)
class RowIndex:
    """One entry per row, in model order. Immutable once built."""

    rows: JournalRows
    """The journal's rows, shared: the index lists its first ``len(ids)`` rows, which never
    change (the journal only appends)."""
    order: array[int] | None
    """The journal row number of each entry (model order); None when it is journal order."""
    kinds: bytes
    ids: tuple[str, ...]
    usage: tuple[UsageLine, ...]
    usage_total: UsageTotals
    misses: MissCounter
    """The cache misses of ``usage``, counted on the worker (design X30); the window's usage
    model takes a copy of it and counts on from there."""

    def __len__(self) -> int:
        return len(self.ids)

    def raw(self, entry: int) -> bytes:
        """The line of the entry's row, without its newline."""
        return self.rows.raw(entry if self.order is None else self.order[entry])


Indexed = tuple[SessionLog, RowIndex]
"""A session file's one reading on open, and the timeline's index of it."""


#: A row's timeline kind by its journal type code (``lines.TYPE_CODES``) where the type says it
#: all; the others (an assistant row's error, system, compaction and note rows) are observed.
_KIND_OF_CODE = bytes(
    USER if code == 1 else ASSISTANT if code == 2 else TOOL if code == 3 else 0 for code in range(256)
)


class _Kinds:
    """Takes, as the journal reader accepts rows, the timeline kind of each row its type does
    not decide, and the usage of every request (journal order, by row number)."""

    __slots__ = ("exceptions", "usage")

    def __init__(self) -> None:
        self.exceptions: dict[int, int] = {}
        self.usage: list[UsageLine] = []

    def __call__(self, number: int, row: dict[str, Any]) -> None:
        kind = row["type"]
        if kind == "user" or kind == "toolResult":
            return
        if kind == "assistant":  # ``row_kind`` of a parsed row, without its Mapping checks
            message = row.get("message")
            stop = message.get("stopReason") if type(message) is dict else None
            if stop == "error" or stop == "aborted":
                self.exceptions[number] = ERROR
        else:
            self.exceptions[number] = row_kind(row)
        if kind == "assistant" or kind == "compaction":
            line = usage_line(row)
            if line is not None:
                self.usage.append(line)


#: How much of a long session's end ``read_tail`` reads: a few hundred rows, a screen or more.
TAIL_BYTES = 256 * 1024


def read_indexed(path: Path) -> Indexed:
    """Read ``path`` once: the journal's reading of it and the timeline's index of its rows
    (worker thread). The reading goes on to ``JournalWriter.open(path, read=...)``."""
    observer = _Kinds()
    log = read_session(path, observer)
    return log, _index(log, observer)


def read_tail(path: Path) -> RowIndex | None:
    """The index of a long session's last rows, from its header line and its last
    ``TAIL_BYTES`` (design X32), or None for a file short enough to read whole at once.

    The same reader reads these lines as it reads the whole file, so the rows are the ones the
    full index ends with (rows anchored before a row outside the tail keep their journal place
    until the full index comes). Its usage covers these rows only: the window shows none of it.
    """
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size < 4 * TAIL_BYTES:
            return None
        header = handle.readline()
        handle.seek(max(handle.tell(), size - TAIL_BYTES))
        handle.readline()  # the end of the row the seek landed in
        tail = handle.read()
    observer = _Kinds()
    log = parse_lines(path, [header, *tail.splitlines(keepends=True)], observer)
    return _index(log, observer)


def _index(log: SessionLog, observer: _Kinds) -> RowIndex:
    rows = log.rows
    ids = rows.ids()
    order = order_indices(ids, rows.anchors)
    kinds = bytearray(rows.type_codes().translate(_KIND_OF_CODE))
    for number, kind in observer.exceptions.items():
        kinds[number] = kind
    if order is None:
        shown, numbers = tuple(ids), None
    else:
        shown = tuple(ids[n] for n in order)
        kinds = bytearray(kinds[n] for n in order)
        numbers = array("q", order)
    usage = tuple(observer.usage)
    misses = MissCounter()
    count = misses.add
    for line in usage:
        count(line.model, line.ts, line.input, line.cache_read, line.cache_write)
    return RowIndex(rows, numbers, bytes(kinds), shown, usage, totals(usage), misses)


@contextmanager
def bulk_load() -> Iterator[None]:
    """Build a long session's objects without the cyclic collector walking them (worker only).

    A 100,000-row session is a few hundred thousand containers; every collection that walks
    them holds the GIL for a second on a loaded machine, and the GUI thread waits. So the
    collector pauses while they are built, and at the end they move to the permanent
    generation (``gc.freeze``), where later collections never walk them. They are plain,
    acyclic JSON values: reference counting still frees them when the session closes.
    """
    with _BULK:
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            yield
        finally:
            gc.freeze()
            if was_enabled:
                gc.enable()


_BULK = threading.Lock()


class RecentRows:
    """The reader the timeline model asks for rows (``row(entry)``, ``close()``): each built on
    demand, the recent ones kept (a paint asks for the same rows again)."""

    def __init__(self) -> None:
        self._cache: OrderedDict[int, dict[str, Any]] = OrderedDict()

    def _build(self, entry: int) -> dict[str, Any]:
        raise NotImplementedError

    def row(self, entry: int) -> dict[str, Any]:
        cached = self._cache.get(entry)
        if cached is not None:
            self._cache.move_to_end(entry)
            return cached
        row = self._build(entry)
        self._cache[entry] = row
        if len(self._cache) > _CACHE_ROWS:
            self._cache.popitem(last=False)
        return row

    def close(self) -> None:
        self._cache.clear()


class RowReader(RecentRows):
    """Reads and decodes single rows of an index on demand."""

    def __init__(self, index: RowIndex) -> None:
        super().__init__()
        self.index = index

    def _build(self, entry: int) -> dict[str, Any]:
        row: dict[str, Any] = orjson.loads(self.index.raw(entry))  # a line the reader accepted: an object
        return row
