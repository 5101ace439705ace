"""A session header is checked by the one row schema when it is read (design T9, T10)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from desktop.host.journal import read_session

GOOD = {"type": "session", "v": 1, "id": "01J", "ts": 5, "app": "pi-desktop", "appVersion": "1", "cwd": "/p"}


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ({**GOOD, "cwd": 3}, "cwd must be text, not a number"),
        ({**GOOD, "ts": True}, "ts must be a whole number, not a boolean"),
        ({**GOOD, "id": ""}, "id must not be empty"),
        ({k: v for k, v in GOOD.items() if k != "appVersion"}, "appVersion is missing"),
    ],
)
def test_an_invalid_header_is_reported_on_line_one_with_its_field(
    tmp_path: Path, header: dict[str, object], message: str
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(orjson.dumps(header) + b"\n")
    log = read_session(path)
    assert log.header is None
    assert [(d.line, d.code) for d in log.errors] == [(1, "header-invalid")]
    assert log.errors[0].message == f"the session header is invalid: {message}"


def test_a_header_with_defaults_and_unknown_fields_is_read(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    header = {"type": "session", "v": 1, "id": "01J", "appVersion": "1", "cwd": "/p", "future": {"x": 1}}
    path.write_bytes(orjson.dumps(header) + b"\n")
    assert read_session(path).header == header
