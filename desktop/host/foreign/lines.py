"""Read a foreign JSONL transcript without ever writing to it (design X1).

pi-coding-agent's own loader appends a missing final newline when it opens a file; Claude Code
keeps appending to its transcripts while they are open. Pi Desktop only reads: the file is
opened read-only, never locked, never repaired and never given a sidecar, so another program
can keep writing it. A line that is not a JSON object is reported with its line number (T9)
and skipped; every other line is kept, so one bad line never hides the rest of a session.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from desktop.host.journal.reader import Diagnostic
from desktop.host.journal.values import value_problem
from desktop.host.regular_files import open_regular

_PREVIEW = 60


@dataclass(slots=True)
class JsonLines:
    """The JSON objects of a file in file order, each with its 1-based line number."""

    path: Path
    objects: list[dict[str, Any]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    size: int = 0


def _preview(raw: bytes) -> str:
    text = raw[:_PREVIEW].decode("utf-8", errors="replace")
    more = f"… ({len(raw):,} bytes)" if len(raw) > _PREVIEW else ""
    return f"{text!r}{more}"


def parse_json_lines(path: Path, data: bytes) -> JsonLines:
    """Split ``data`` into objects; malformed lines become diagnostics naming file and line."""
    result = JsonLines(path=path, size=len(data))
    objects = result.objects
    numbers = result.lines
    diagnostics = result.diagnostics
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    chunks = data.split(b"\n")
    last = len(chunks)
    for number, raw in enumerate(chunks, 1):
        if not raw or raw.isspace():
            continue
        try:
            obj = loads(raw)
        except decode_error as exc:
            glued = _glued(raw)
            if glued is not None:
                # A file that lost its final newline and was appended to again: the objects
                # were written as separate entries; read each, and say so.
                objects.extend(glued)
                numbers.extend([number] * len(glued))
                diagnostics.append(
                    Diagnostic(
                        path,
                        number,
                        "warning",
                        "glued-objects",
                        f"{len(glued)} JSON objects on one line (a newline missing between them); "
                        "each read as its own entry",
                    )
                )
                continue
            torn = number == last
            why = (
                "the last line is incomplete (the writing program may still be appending)"
                if torn
                else f"this line is not valid JSON ({exc.msg})"
            )
            diagnostics.append(
                Diagnostic(
                    path,
                    number,
                    "warning" if torn else "error",
                    "torn-tail" if torn else "not-json",
                    f"{why}; starts with {_preview(raw)}; skipped",
                )
            )
            continue
        if type(obj) is not dict:
            diagnostics.append(
                Diagnostic(
                    path,
                    number,
                    "error",
                    "not-object",
                    f"this line is JSON but not an object: {_preview(raw)}",
                )
            )
            continue
        held = value_problem(raw, obj)
        if held is not None:
            field, what = held
            diagnostics.append(
                Diagnostic(
                    path, number, "error", "bad-value", f"this line cannot be used: {what}; skipped", field
                )
            )
            continue
        objects.append(obj)
        numbers.append(number)
    return result


def _glued(raw: bytes) -> list[dict[str, Any]] | None:
    """The objects of a line holding two or more JSON objects back to back, else None."""
    if not raw.lstrip().startswith(b"{") or b"}{" not in raw.replace(b"} {", b"}{"):
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    index, end = 0, len(text)
    while index < end:
        while index < end and text[index].isspace():
            index += 1
        if index == end:
            break
        try:
            obj, index = decoder.raw_decode(text, index)
        except json.JSONDecodeError:
            return None
        if type(obj) is not dict:
            return None
        found.append(obj)
    return found if len(found) > 1 else None


def read_json_lines(path: str | os.PathLike[str]) -> JsonLines:
    """Read and split ``path`` (opened read-only: no lock, no O_CREAT, nothing written); raises
    only ``OSError`` (missing file, no permission)."""
    where = Path(path)
    with open_regular(where) as handle:  # never creates; no FIFO or device (design X24)
        return parse_json_lines(where, handle.read())
