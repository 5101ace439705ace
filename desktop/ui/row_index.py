"""The timeline's row index: where each row is in the file, and its kind (design G1, G9).

Like Anki's browser table, the window does not hold a long session's rows: it holds, per row
in model order, the byte offset and length of its line, one byte for its kind and its id, and
reads (and decodes) a row only when a view asks for it. The index is built on the worker
thread while the file is parsed once, then handed to the window as one immutable object; a
100,000-row session crosses the thread boundary in constant time and costs a few megabytes in
the window instead of the rows' hundreds.

Which lines become rows follows the journal reader exactly (an object with a string ``id`` and
``type``, an integer version, the first of a repeated id, values the app can carry and, for a
row of a known version, the shape its type promises: the same checks, design T9), and the
rows are put in model order by the journal's own rule (``model_order``); the worker checks the ids against the opened
journal and falls back to the rows themselves if they ever differ. No Qt here.
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

from desktop.host.journal.envelope import SCHEMA_VERSION
from desktop.host.journal.reader import READ_BUFFER
from desktop.host.journal.rows import row_problem
from desktop.host.journal.values import value_problem
from desktop.ui import rowinfo
from desktop.ui.rowinfo import row_kind
from desktop.ui.usage_stats import UsageLine, UsageTotals, totals, usage_line

_CACHE_ROWS = 4096
_SIMPLE_KINDS = {"user": rowinfo.USER, "toolResult": rowinfo.TOOL}
"""Kinds known from the type alone (the rest ask ``row_kind``: errors, notes, anchors, usage)."""


@dataclass(frozen=True, slots=True, eq=False)
class RowIndex:
    """One entry per row, in model order. Immutable once built."""

    path: str
    offsets: array[int]
    lengths: array[int]
    kinds: bytes
    ids: tuple[str, ...]
    usage: tuple[UsageLine, ...]
    usage_total: UsageTotals
    end: int
    """Byte offset just after the last indexed line."""

    def __len__(self) -> int:
        return len(self.ids)


def build_index(path: Path) -> RowIndex:
    """Read ``path`` once: offsets, lengths, kinds, ids and usage of every row (worker thread)."""
    offsets: array[int] = array("q")
    lengths: array[int] = array("q")
    kinds = bytearray()
    ids: list[str] = []
    anchors: dict[int, str] = {}
    seen: set[str] = set()
    usage: list[UsageLine] = []
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    kind_of = row_kind
    usage_of = usage_line
    simple = _SIMPLE_KINDS
    held, shape_of, schema = value_problem, row_problem, SCHEMA_VERSION
    with open(path, "rb", buffering=READ_BUFFER) as handle:
        handle.readline()  # the session header
        position = handle.tell()
        for raw in handle:
            start = position
            position += len(raw)
            if raw[-1:] != b"\n":
                position = start  # a torn tail: never acknowledged, not a row
                break
            try:
                row = loads(raw)
            except decode_error:
                continue
            if type(row) is not dict:
                continue
            row_id = row.get("id")
            kind = row.get("type")
            version = row.get("v")
            if (
                type(row_id) is not str
                or not row_id
                or type(kind) is not str
                or type(version) is not int
                or version < 1
                or row_id in seen
            ):
                continue
            if held(raw, row) is not None:
                continue
            if version <= schema and shape_of(row) is not None:
                continue
            seen.add(row_id)  # as in the journal: a set-aside row's id is free for a later row
            code = simple.get(kind)
            if code is None:
                code = kind_of(row)
                if kind == "assistant" or kind == "compaction":
                    line = usage_of(row)
                    if line is not None:
                        usage.append(line)
                elif kind == "system":
                    before = row.get("before")
                    if type(before) is str and before:
                        anchors[len(ids)] = before
            offsets.append(start)
            lengths.append(len(raw) - 1)
            kinds.append(code)
            ids.append(row_id)
    order = _model_order(ids, anchors)
    if order is not None:
        offsets = array("q", (offsets[i] for i in order))
        lengths = array("q", (lengths[i] for i in order))
        kinds = bytearray(kinds[i] for i in order)
        ids = [ids[i] for i in order]
    return RowIndex(
        str(path), offsets, lengths, bytes(kinds), tuple(ids), tuple(usage), totals(usage), position
    )


def _model_order(ids: list[str], anchors: dict[int, str]) -> list[int] | None:
    """The journal's model-order rule (``desktop.host.journal.order``) over ids and anchors:
    a system row anchored ``before`` X goes just before X unless the anchor names no row,
    itself, or another anchored row. None when nothing moves."""
    if not anchors:
        return None
    present = set(ids)
    anchored_ids = {ids[n] for n in anchors}
    honoured = {
        n: target
        for n, target in anchors.items()
        if target in present and target != ids[n] and target not in anchored_ids
    }
    if not honoured:
        return None
    waiting: dict[str, list[int]] = {}
    for n, target in honoured.items():
        waiting.setdefault(target, []).append(n)
    order: list[int] = []
    for n, row_id in enumerate(ids):
        if n in honoured:
            continue
        order.extend(waiting.pop(row_id, ()))
        order.append(n)
    return order


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


class RowReader:
    """Reads and decodes single rows of an index on demand, keeping the recent ones."""

    def __init__(self, index: RowIndex) -> None:
        self.index = index
        self._fd: int | None = None
        self._cache: OrderedDict[int, dict[str, Any]] = OrderedDict()

    def raw(self, entry: int) -> bytes:
        if self._fd is None:
            self._fd = os.open(self.index.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        return os.pread(self._fd, self.index.lengths[entry], self.index.offsets[entry])

    def row(self, entry: int) -> dict[str, Any]:
        cached = self._cache.get(entry)
        if cached is not None:
            self._cache.move_to_end(entry)
            return cached
        try:
            row = orjson.loads(self.raw(entry))
        except (OSError, orjson.JSONDecodeError) as exc:  # the file changed under us: say so in the row
            row = {
                "type": "note",
                "id": self.index.ids[entry],
                "level": "error",
                "text": f"unreadable: {exc}",
            }
        if type(row) is not dict:
            row = {"type": "note", "id": self.index.ids[entry], "level": "error", "text": "unreadable row"}
        self._cache[entry] = row
        if len(self._cache) > _CACHE_ROWS:
            self._cache.popitem(last=False)
        return row

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
