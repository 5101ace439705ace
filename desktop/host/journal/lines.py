"""The journal's rows kept as their raw lines, decoded on demand (design T1, G9).

A decoded row costs about four times its line (a 43 MB session is 170 MB of dicts), and a
session is read whole on every open. So the journal keeps each accepted row as the bytes of
its line in one buffer, with what its consumers ask of every row without reading it: the id,
the type, the anchor of a system row (``before``, for model order) and whether the row carries
a model message (``row_facts``). ``JournalRows`` is the ``Sequence`` of rows the writer hands
out: indexing decodes the line (the recent rows stay decoded, so the rows a turn touches are
the same objects each time), and walking the whole history decodes one row at a time and lets
it go. A consumer that keeps every row it is given keeps the cost it would have had before;
the runtime's context keeps row numbers instead (``desktop.session.context_log``).

Rows are checked once, when read (design T9): only rows that passed are stored, so what a
row decodes to on demand has the shape the reader checked.
"""

from __future__ import annotations

import contextlib
import re
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, overload

import orjson

from desktop.host.journal.envelope import SCHEMA_VERSION

SEARCH_CHUNK = 1 << 20
"""Bytes of lines one regular expression search covers (``JournalRows.lines_hold``): between
two of them the worker can hand the GIL to the window (design G9)."""

#: Row types, one byte each (0: a type this app does not know).
TYPE_CODES: dict[str, int] = {
    "user": 1,
    "assistant": 2,
    "toolResult": 3,
    "system": 4,
    "compaction": 5,
    "note": 6,
}
_TYPE_NAMES = {code: name for name, code in TYPE_CODES.items()}

#: ``row["message"]`` is the row's model message (a user, assistant or tool result row).
MESSAGE = 1
#: ``row["modelSystem"]["message"]`` is the row's model message (a v1 system update).
SYSTEM_MESSAGE = 2
#: The row carries model-system metadata or a checkpoint (design S5).
MODEL_SYSTEM = 4
#: The row's version is newer than this app's: kept, read as unknown (design T7).
NEWER = 8

#: Decoded rows kept, newest use last: the rows of the last turns, which every request reads.
CACHE_ROWS = 256


def row_facts(row: Mapping[str, Any]) -> tuple[int, int, str | None]:
    """The type code, flags and anchor of one row: what model order and the context view
    read from every row, taken once when the row is read or written."""
    kind = row.get("type")
    code = TYPE_CODES.get(kind, 0) if type(kind) is str else 0
    version = row.get("v", 1)
    flags = 0
    newer = type(version) is not int or version > SCHEMA_VERSION
    if newer:
        flags |= NEWER
    anchor: str | None = None
    if code == 4:
        before = row.get("before")
        if type(before) is str and before:
            anchor = before
        meta = row.get("modelSystem")
        if isinstance(meta, dict):
            flags |= MODEL_SYSTEM
            if not newer and meta.get("v") == 1:
                message = meta.get("message")
                if isinstance(message, dict) and message.get("role") == "system":
                    flags |= SYSTEM_MESSAGE
    elif code in (1, 2, 3):
        if not newer and isinstance(row.get("message"), dict):
            flags |= MESSAGE
    elif code == 5 and isinstance(row.get("checkpoint"), dict):
        flags |= MODEL_SYSTEM
    return code, flags, anchor


class JournalRows(Sequence[dict[str, Any]]):
    """Every acknowledged row in journal order, stored as its line and decoded when asked for.

    Append-only: a row's number never changes and its line never changes, so a consumer can
    keep row numbers instead of rows. Rows handed out are shared: do not mutate them.
    """

    #: Set (``keeping_decoded``) by a command whose first request follows the open: the rows
    #: the reader decoded are kept until one pass reads their messages (``messages``), instead
    #: of being decoded a second time for it (design P7). The window never sets it.
    keep_decoded = False

    def __init__(self) -> None:
        self._kept: dict[int, dict[str, Any]] | None = {} if JournalRows.keep_decoded else None
        self._data = bytearray()
        self._starts: array[int] = array("q", [0])
        self._ids: list[str] = []
        self._types = bytearray()
        self._flags = bytearray()
        self.anchors: dict[int, str] = {}
        """Row number of each system row with a ``before`` anchor, and the id it names."""
        self._cache: OrderedDict[int, dict[str, Any]] = OrderedDict()

    # --- building ---------------------------------------------------------------------------

    def add(self, raw: bytes, row: dict[str, Any], row_id: str, *, keep: bool = False) -> None:
        """Store one checked row: its line (as read or written, newline included) and its facts. ``keep``
        leaves it decoded (a row just written is what the next request reads)."""
        code, flags, anchor = row_facts(row)
        number = len(self._ids)
        self._data += raw
        self._starts.append(len(self._data))
        self._ids.append(row_id)
        self._types.append(code)
        self._flags.append(flags)
        if anchor is not None:
            self.anchors[number] = anchor
        if keep:
            self._remember(number, row)

    def add_message(self, raw: bytes, row_id: str, code: int, row: dict[str, Any] | None = None) -> None:
        """``add`` of a user, assistant or tool result row (``code``) of this schema version
        that the reader checked against the row schema: its facts are then ``code,
        MESSAGE, None`` without reading the row again (``row_facts`` costs about 1 µs a row,
        most of the reader's own work on a session of such rows, design D6). ``row`` is the
        decoded row, kept while ``keep_decoded`` asks for it."""
        if self._kept is not None and row is not None:
            self._kept[len(self._ids)] = row
        self._data += raw
        self._starts.append(len(self._data))
        self._ids.append(row_id)
        self._types.append(code)
        self._flags.append(MESSAGE)

    # --- reading ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._ids)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self.peek(i) for i in range(*index.indices(len(self._ids)))]
        count = len(self._ids)
        if index < 0:
            index += count
        if not 0 <= index < count:
            raise IndexError("journal row out of range")
        return self._row(index)

    def __eq__(self, other: object) -> bool:
        """Equal to a list (or another journal) of the same rows, as the plain list was."""
        if isinstance(other, JournalRows | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Each row in turn; rows not recently used are decoded for the walk and let go."""
        for index in range(len(self._ids)):
            yield self.peek(index)

    def __reversed__(self) -> Iterator[dict[str, Any]]:
        for index in range(len(self._ids) - 1, -1, -1):
            yield self.peek(index)

    def peek(self, index: int) -> dict[str, Any]:
        """The row, without making it one of the recent rows (a walk over the whole history
        would only push the rows a turn uses out)."""
        row = self._cache.get(index)
        if row is not None:
            return row
        if self._kept is not None and (row := self._kept.get(index)) is not None:
            return row
        starts = self._starts
        return orjson.loads(self._data[starts[index] : starts[index + 1]])  # type: ignore[no-any-return]

    def messages(self, indices: Iterable[int]) -> list[Any]:
        """``peek(i)["message"]`` for each row number, in one pass: the first request after an
        open reads every message of the history, and the per-row calls and line copies cost
        about as much as the decoding (design P7)."""
        cache = self._cache
        starts = self._starts
        loads = orjson.loads
        kept = self._kept
        if kept:  # each kept row is handed out once, then let go: decoded again if asked again
            out = []
            for index in indices:
                row = cache.get(index) or kept.pop(index, None)
                out.append(row["message"] if row is not None else self.peek(index)["message"])
            if not kept:
                self._kept = None
            return out
        with memoryview(self._data) as data:
            return [
                row["message"]
                if (row := cache.get(index)) is not None
                else loads(data[starts[index] : starts[index + 1]])["message"]
                for index in indices
            ]

    def _row(self, index: int) -> dict[str, Any]:
        cache = self._cache
        row = cache.get(index)
        if row is not None:
            cache.move_to_end(index)
            return row
        starts = self._starts
        row = orjson.loads(self._data[starts[index] : starts[index + 1]])
        self._remember(index, row)
        return row  # type: ignore[no-any-return]

    def _remember(self, index: int, row: dict[str, Any]) -> None:
        cache = self._cache
        cache[index] = row
        if len(cache) > CACHE_ROWS:
            cache.popitem(last=False)

    def raw(self, index: int) -> bytes:
        """The row's line as it is in the file, without its newline."""
        return bytes(self._data[self._starts[index] : self._starts[index + 1]]).removesuffix(b"\n")

    def row_id(self, index: int) -> str:
        return self._ids[index]

    def ids(self) -> Sequence[str]:
        """Every row's id in journal order (shared: do not change it)."""
        return self._ids

    def type_code(self, index: int) -> int:
        """The row's type as a ``TYPE_CODES`` byte (0: a type this app does not know)."""
        return self._types[index]

    def type_codes(self) -> bytes:
        return bytes(self._types)

    def all_flags(self) -> bytes:
        return bytes(self._flags)

    def type_of(self, index: int) -> str | None:
        """The row's type, or None for a type this app does not know."""
        return _TYPE_NAMES.get(self._types[index])

    def flags(self, index: int) -> int:
        return self._flags[index]

    def of_type(self, kind: str) -> Iterator[dict[str, Any]]:
        """The rows of one type, decoding no other row."""
        code = TYPE_CODES[kind]
        types = self._types
        start = types.find(code)
        while start >= 0:
            yield self.peek(start)
            start = types.find(code, start + 1)

    def lines_hold(self, text: bytes) -> bool:
        """Whether any row's line holds these bytes (a search over every line, no decoding).
        The regular expression engine's literal search, not ``in``: ``in`` slows down on a short
        needle whose last byte is common (``\\u`` in text full of ``u``), 4 ms against 1.5 ms
        over a 4 MB session at open (design D6). ``SEARCH_CHUNK`` bytes at a time, each chunk
        overlapping the next by the needle's length less one: one search of a 40 MB session
        held the GIL for 50 to 100 ms at open, and the window's event loop waited for all of it
        (design G9)."""
        pattern = re.compile(re.escape(text))
        data = self._data
        reach = SEARCH_CHUNK + max(len(text) - 1, 0)
        return any(
            pattern.search(data, start, start + reach) is not None
            for start in range(0, max(len(data), 1), SEARCH_CHUNK)
        )


@contextlib.contextmanager
def keeping_decoded() -> Iterator[None]:
    """Journals read inside keep their decoded rows until their messages are read once."""
    JournalRows.keep_decoded = True
    try:
        yield
    finally:
        JournalRows.keep_decoded = False


def rows_of_type(rows: Sequence[Mapping[str, Any]], kind: str) -> Iterable[Mapping[str, Any]]:
    """The rows of one type, without decoding the others when ``rows`` is the journal's."""
    if isinstance(rows, JournalRows):
        return rows.of_type(kind)
    return (row for row in rows if row.get("type") == kind)
