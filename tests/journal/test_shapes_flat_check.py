"""The flat check of common rows answers exactly as the field-by-field check (design T9).

``row_shape_problem`` first runs a call-free check on user, assistant and tool result rows and
falls back to the detailed one when it does not pass. A flat check that accepted a row the
detailed one refuses would let a damaged row through, so every field of real rows is replaced
by each JSON type (and removed) and both paths must agree on every variant.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from desktop.host.journal import shapes
from desktop.host.journal.lines import MESSAGE, NEWER, row_facts
from desktop.host.journal.reader import parse_session

USAGE = {
    "input": 10,
    "output": 2.5,
    "cacheRead": 0,
    "totalTokens": 12,
    "cost": {"input": 0.1, "output": 0, "total": 0.1},
}
ROWS: list[dict[str, Any]] = [
    {
        "type": "user",
        "id": "u1",
        "v": 1,
        "ts": 1,
        "message": {"role": "user", "content": "hi", "timestamp": 1},
    },
    {
        "type": "user",
        "id": "u2",
        "v": 1,
        "message": {
            "role": "user",
            "content": [
                {"type": "text", "text": "a", "textSignature": "s"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            ],
        },
    },
    {
        "type": "assistant",
        "id": "a1",
        "v": 1,
        "ts": 2,
        "route": {"provider": "p", "model": "m", "api": "anthropic-messages", "baseUrl": "u", "account": "x"},
        "message": {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "t", "thinkingSignature": "s", "redacted": False},
                {"type": "text", "text": "ok", "textSignature": "s"},
                {
                    "type": "toolCall",
                    "id": "c1",
                    "name": "read",
                    "arguments": {"path": "a"},
                    "thoughtSignature": "s",
                    "namespace": "n",
                },
            ],
            "api": "anthropic-messages",
            "provider": "p",
            "model": "m",
            "stopReason": "toolUse",
            "errorMessage": "e",
            "responseId": "r",
            "responseModel": "m",
            "usage": USAGE,
            "timestamp": 2,
        },
    },
    {
        "type": "toolResult",
        "id": "t1",
        "v": 1,
        "ts": 3,
        "message": {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [
                {"type": "text", "text": "x"},
                {"type": "image", "data": "A", "mimeType": "image/png"},
            ],
            "isError": False,
            "usage": USAGE,
            "timestamp": 3,
        },
    },
]
REPLACEMENTS: list[object] = [None, True, 7, 1.5, "text", [], {}, [{}], {"type": "text"}]
REMOVED = object()


def paths(value: object, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*at, key)
            yield from paths(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield (*at, index)
            yield from paths(item, (*at, index))


def replaced(row: dict[str, Any], path: tuple[Any, ...], new: object) -> dict[str, Any]:
    out = copy.deepcopy(row)
    parent: Any = out
    for step in path[:-1]:
        parent = parent[step]
    if new is REMOVED:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return out


def variants() -> Iterator[dict[str, Any]]:
    for row in ROWS:
        yield row
        for path in paths(row):
            if path == ("type",):
                continue
            for new in [*REPLACEMENTS, REMOVED]:
                yield replaced(row, path, new)


def test_the_real_rows_take_the_flat_path() -> None:
    for row in ROWS:
        fits = shapes.FITS[row["type"]]
        assert fits(row), row["id"]


def test_the_flat_check_agrees_with_the_detailed_one(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = list(variants())
    fast = [shapes.row_shape_problem(row) for row in rows]
    monkeypatch.setattr(shapes, "FITS", {})
    detailed = [shapes.row_shape_problem(row) for row in rows]
    refused = 0
    for row, quick, slow in zip(rows, fast, detailed, strict=True):
        assert (quick is None) == (slow is None), row
        if slow is not None:
            assert quick is not None and quick.field == slow.field
            refused += 1
    assert refused > 100  # the variants really exercise refusals, not just accepted rows


def test_the_reader_stores_the_facts_row_facts_gives(tmp_path: Path) -> None:
    """Rows the flat check passes are stored without ``row_facts`` (``JournalRows.add_message``):
    every stored row's type, flags and anchor must still be what ``row_facts`` says, for the
    real rows and every variant the reader keeps, with rows of a newer version among them."""
    header = {"type": "session", "v": 1, "id": "s", "ts": 1, "app": "pi-desktop"}
    rows = []
    for number, row in enumerate(variants()):
        if type(row.get("id")) is str:
            row = {**row, "id": f"r{number}"}
        rows.append(row)
    rows += [{**row, "id": f"n{number}", "v": 2} for number, row in enumerate(ROWS)]
    data = b"".join(orjson.dumps(row) + b"\n" for row in [header, *rows])
    log = parse_session(tmp_path / "s.jsonl", data)
    stored = log.rows
    assert 100 < len(stored) < len(rows)  # kept common rows, newer rows and set aside damaged ones
    codes, flags = stored.type_codes(), stored.all_flags()
    assert MESSAGE in flags and NEWER in {flag & NEWER for flag in flags}
    for index, row in enumerate(stored):
        assert (codes[index], flags[index], stored.anchors.get(index)) == row_facts(row), row
