"""Read a session file into a ``SessionLog`` without ever raising on its content.

Every line is checked here against the one row schema (``rows``, design T9, T10): the envelope
(``type``, ``id``, ``v``) first, then the values nothing after the reader could carry
(``values``), then the shape its type promises; the models themselves are built on demand
(``rows.parse_row``). A well-formed message row is checked as msgspec decodes its line into
its schema type (design X29); anything else takes the full reading. The file is read line by
line, and each accepted row is kept as its line (``lines.JournalRows``): a row is decoded
again when it is used, so a long session is held at about the size of its file, not four times
that as dicts (design G9). Problems become ``Diagnostic`` entries that name the file and the
line; lines that cannot be used are kept aside (``SetAside``), never dropped silently
and never rewritten. A last line without its newline is the mark of an interrupted append: it is
reported as ``TornTail`` and left for the writer to move into a sidecar file (T5).

Its plain records are named tuples, not frozen dataclasses: every open (``status`` too) imports
this module, and on Python 3.11 a frozen dataclass costs about 1 ms to create (design D6).
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, NamedTuple, Protocol

import msgspec
import orjson

from desktop.host.journal.envelope import SCHEMA_VERSION
from desktop.host.journal.errors import JournalFormatError
from desktop.host.journal.lines import TYPE_CODES, JournalRows
from desktop.host.journal.rows import (
    MESSAGE_ROW_LINES,
    SessionHeader,
    problem_of,
    row_problem,
)
from desktop.host.journal.values import plain_line, value_problem

Severity = Literal["error", "warning"]

_PREVIEW = 60
#: Row types whose checked row carries a model message (``lines.JournalRows.add_message``).
_MESSAGE_ROWS = frozenset({"user", "assistant", "toolResult"})


class _Report(Protocol):
    def __call__(self, line: int, code: str, message: str, severity: Severity = ...) -> None: ...


class Diagnostic(NamedTuple):
    """A problem found in a session file, at a line (and, for a row of the wrong shape, a field)."""

    path: Path
    line: int
    severity: Severity
    code: str
    message: str
    field: str | None = None
    """The dotted path of the offending field inside the row (``checkpoint.message.toolsAdded[0].name``)."""

    def __str__(self) -> str:
        return f"{self.path}: line {self.line}: {self.message}"


def format_diagnostic(diagnostic: Diagnostic) -> str:
    """``PATH:LINE: message (field)``, the one line a user is shown for a problem (design T9)."""
    where = f" ({diagnostic.field})" if diagnostic.field else ""
    return f"{diagnostic.path}:{diagnostic.line}: {diagnostic.message}{where}"


class SetAside(NamedTuple):
    """A complete line that is not part of the session (kept in the file, shown to the user)."""

    line: int
    raw: bytes
    reason: str


class TornTail(NamedTuple):
    """An incomplete last line: bytes from ``offset`` to the end of the file, without a newline."""

    line: int
    offset: int
    size: int


@dataclass(slots=True, eq=False, repr=False)
class SessionLog:
    """What the reader made of one session file."""

    path: Path
    header: dict[str, Any] | None
    rows: JournalRows = field(default_factory=JournalRows)
    """The accepted rows, kept as their lines and decoded on demand (``lines.JournalRows``)."""
    ids: dict[str, int] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    set_aside: list[SetAside] = field(default_factory=list)
    torn: TornTail | None = None
    end: int = 0
    """Byte offset just after the last complete line: where the next append belongs."""
    source: tuple[int, int, int, int] | None = None
    """The file read (device, inode, size, modification time in ns) as it was before the
    read, when it was read by name: ``JournalWriter.open`` takes this reading instead of
    reading the file again only while the file still matches it (design X26)."""

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def newer_format(self) -> bool:
        """Written by a newer app: readable, but this app must not continue it (T7)."""
        version = (self.header or {}).get("v")
        return isinstance(version, int) and version > SCHEMA_VERSION

    def format_error(self) -> JournalFormatError:
        """The error to raise when this file cannot be opened as a session at all."""
        first = next((d for d in self.diagnostics if d.code.startswith("header")), None)
        if first is None:
            first = next(iter(self.errors), None)
        if first is None:
            return JournalFormatError(self.path, 1, "not a Pi Desktop session file")
        return JournalFormatError(self.path, first.line, first.message)


READ_BUFFER: Final = 1 << 20
"""Bytes a file read line by line on the worker is read at a time (design G9). With the default
buffer (a few kilobytes) the worker releases and retakes the GIL thousands of times a second;
each retake restarts the window thread's wait for the GIL, which then only gets it by winning
one of those races and stalled the window 50 to 150 ms at a time while a session opened. One
read a megabyte leaves the hand-over to the interpreter's switch interval (5 ms)."""


RowObserver = Callable[[int, dict[str, Any]], None]
"""Called with an accepted row's number and decoded dict, in journal order, while the file is
read: a reader of the same file for another purpose (the window's row index) takes what it
needs from this one reading instead of parsing the file again (design X26). Every row's type
is in ``JournalRows.type_codes``; a user or tool result row read on the fast path (design X29)
is not given (its type is all there is to take), and an assistant row read there comes as its
envelope (``type``, ``id``, ``ts`` when given) and its ``message``, its other fields left out."""

#: The decoder that checks a message row's line as it decodes it, and the row's type code, by
#: the type's name as the line starts (``{"type":"user",``): the reader's fast path (X29).
_LINE_DECODERS: Final = {
    name: (msgspec.json.Decoder(model), TYPE_CODES[name.decode()])
    for name, model in MESSAGE_ROW_LINES.items()
}
_TYPE_FIRST: Final = b'{"type":"'


def read_session(path: Path, observe: RowObserver | None = None) -> SessionLog:
    """Read ``path``; raises only ``OSError`` (missing file, no permission)."""
    with open(path, "rb", buffering=READ_BUFFER) as handle:
        stat = os.fstat(handle.fileno())
        log = parse_lines(path, handle, observe)
    log.source = file_identity(stat)
    return log


def file_identity(stat: os.stat_result) -> tuple[int, int, int, int]:
    """What tells that a file is the one read and unchanged since (an append changes its size)."""
    return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)


def _preview(raw: bytes) -> str:
    """The line's start for a message: invalid bytes as ``\\xff`` escapes, never garbled (G7)."""
    text = raw[:_PREVIEW].decode("utf-8", errors="backslashreplace")
    more = f"… ({len(raw):,} bytes)" if len(raw) > _PREVIEW else ""
    return f"{text!r}{more}"


def _json_problem(exc: orjson.JSONDecodeError, raw: bytes) -> str:
    if "utf-8" in exc.msg.lower():
        return f"is not valid UTF-8 text; starts with {_preview(raw)}"
    return f"is not valid JSON ({exc.msg} at byte {exc.pos}); starts with {_preview(raw)}"


def parse_session(path: Path, data: bytes) -> SessionLog:
    """Split ``data`` into header, rows, diagnostics and a possible torn tail."""
    return parse_lines(path, io.BytesIO(data))


def parse_lines(path: Path, lines: Iterable[bytes], observe: RowObserver | None = None) -> SessionLog:
    """Header, rows, diagnostics and a possible torn tail from the file's lines, each with its
    newline (a file object yields them so): one line at a time, never the whole file split at
    once, and each row's dict let go once its facts are taken (``lines.JournalRows``) and
    ``observe`` has seen it."""
    log = SessionLog(path=path, header=None)
    diagnostics = log.diagnostics

    def problem(line: int, code: str, message: str, severity: Severity = "error") -> None:
        diagnostics.append(Diagnostic(path, line, severity, code, message))

    def skip(line: int, raw: bytes, code: str, reason: str, field: str | None = None) -> None:
        """Set a line that cannot be used aside, and say so with its line (and field)."""
        set_aside.append(SetAside(line, raw.removesuffix(b"\n"), reason))
        message = reason + "; it is kept in the file and skipped"
        diagnostics.append(Diagnostic(path, line, "error", code, message, field))

    source = iter(lines)
    first = next(source, b"")
    if not first:
        problem(1, "header-missing", "the file is empty; a session file starts with a header line")
        return log
    if first[-1:] != b"\n":
        _torn(log, 1, 0, first)
        problem(1, "header-missing", "the file holds no complete line, so no session header")
        return log
    _parse_header(log, first[:-1], problem)
    end = len(first)

    rows = log.rows
    add = rows.add
    add_message = rows.add_message
    ids = log.ids
    set_aside = log.set_aside
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    # The fast path (design X29): a message row whose line starts with its type is checked as
    # it is decoded, in one pass and without the whole row as a dict. Every line it does not
    # accept at once (another type, a problem of any kind, a duplicate id, a newer version, a
    # line ``value_problem`` would look into) takes the full path below, which says why. Off
    # while the rows are kept decoded: they are then wanted as whole dicts.
    fast = {} if JournalRows.keep_decoded else _LINE_DECODERS
    line_error = msgspec.DecodeError
    type_first = _TYPE_FIRST
    assistant = TYPE_CODES["assistant"]
    line_no = 1
    for raw in source:
        line_no += 1
        if raw[-1:] != b"\n":
            _torn(log, line_no, end, raw)
            break
        end += len(raw)
        if raw == b"\n":
            continue
        if raw.startswith(type_first):
            decoder = fast.get(raw[9 : raw.find(b'"', 9)])
            if decoder is not None:
                try:
                    row = decoder[0].decode(raw)
                except (line_error, RecursionError):  # msgspec's limit on nesting it skips
                    row = None
                if row is not None and 1 <= row.v <= SCHEMA_VERSION and row.id not in ids and plain_line(raw):
                    fast_id = row.id
                    number = ids[fast_id] = len(ids)
                    add_message(raw, fast_id, decoder[1])
                    if observe is not None and decoder[1] == assistant:
                        seen: dict[str, Any] = {"type": row.type, "id": fast_id, "message": row.message}
                        if row.ts is not msgspec.UNSET:
                            seen["ts"] = row.ts
                        observe(number, seen)
                    continue
        try:
            obj = loads(raw)
        except decode_error as exc:
            raw = raw[:-1]
            reason = "this line " + _json_problem(exc, raw)
            skip(line_no, raw, "not-json", reason)
            continue
        if type(obj) is not dict:
            reason = f"this line is JSON but not an object: {_preview(raw[:-1])}"
            skip(line_no, raw, "not-object", reason)
            continue
        row_id = obj.get("id")
        version = obj.get("v")
        if type(row_id) is not str or not row_id or type(obj.get("type")) is not str:
            reason = f"row has no string 'id' and 'type': {_preview(raw[:-1])}"
            skip(line_no, raw, "bad-envelope", reason)
            continue
        if type(version) is not int or version < 1:
            reason = (
                f"row {row_id} has an unknown schema version {version!r} (expected 1 to {SCHEMA_VERSION})"
            )
            skip(line_no, raw, "bad-version", reason)
            continue
        if row_id in ids:
            reason = f"row id {row_id} appears again (first on an earlier line)"
            set_aside.append(SetAside(line_no, raw.removesuffix(b"\n"), reason))
            problem(line_no, "duplicate-id", reason + "; the first one is used", "warning")
            continue
        held = value_problem(raw, obj)
        if held is not None:
            reason = f"{obj['type']} row {row_id} cannot be used: {held[1]}"
            skip(line_no, raw, "bad-value", reason, held[0])
            continue
        shape = row_problem(obj) if version <= SCHEMA_VERSION else None
        if shape is not None:
            reason = f"{obj['type']} row {row_id} cannot be used: {shape.message}"
            skip(line_no, raw, "bad-shape", reason, shape.field)
            continue
        kind = obj["type"]
        if kind in _MESSAGE_ROWS and version <= SCHEMA_VERSION:
            number = ids[row_id] = len(ids)
            add_message(raw, row_id, TYPE_CODES[kind], obj)  # checked: its message is a message
            if observe is not None:
                observe(number, obj)
            continue
        if version > SCHEMA_VERSION:
            problem(
                line_no,
                "newer-row",
                f"row {row_id} uses schema version {version}, newer than this app ({SCHEMA_VERSION}); "
                "it is kept unchanged and treated as unknown",
                "warning",
            )
        number = ids[row_id] = len(ids)  # its row number: every stored row has its id here
        add(raw, obj, row_id)
        if observe is not None:
            observe(number, obj)
    log.end = end
    return log


def _torn(log: SessionLog, line: int, offset: int, tail: bytes) -> None:
    """Note an incomplete last line (reported first, before the problems of earlier lines)."""
    log.torn = TornTail(line=line, offset=offset, size=len(tail))
    log.end = offset
    log.diagnostics.insert(
        0,
        Diagnostic(
            log.path,
            line,
            "warning",
            "torn-tail",
            f"the last line is incomplete ({len(tail):,} bytes without a line end): the app stopped "
            "while writing it, so it was never acknowledged; it is set aside when the session is "
            "next opened for writing",
        ),
    )


def _parse_header(log: SessionLog, raw: bytes, problem: _Report) -> None:
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        problem(1, "header-not-json", "this line " + _json_problem(exc, raw) + "; this is not a session file")
        return
    if not isinstance(obj, dict) or obj.get("type") != "session":
        problem(1, "header-missing", f"line 1 is not a session header: {_preview(raw)}")
        return
    version = obj.get("v")
    if type(version) is not int or version < 1:
        problem(1, "header-version", f"the session header has an unknown schema version {version!r}")
        return
    if version > SCHEMA_VERSION:
        problem(
            1,
            "header-newer",
            f"the session was written by a newer Pi Desktop (format v{version}, this app reads "
            f"v{SCHEMA_VERSION}); it can be read but not continued here",
            "warning",
        )
        log.header = obj
        return
    shape = problem_of(SessionHeader, obj)
    if shape is not None:
        problem(1, "header-invalid", f"the session header is invalid: {shape.message}")
        return
    log.header = obj
