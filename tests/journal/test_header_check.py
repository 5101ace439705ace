"""The reader checks a session header without pydantic (design D6); it must agree with the model.

``reader.header_problems`` is what every open runs; ``rows.SessionHeader`` is what the writer
builds headers with. On a table of headers both accept the same ones and refuse the same ones,
and a refused header is reported on line 1 with the field that is wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pydantic
import pytest

from desktop.host.journal import SessionHeader, read_session
from desktop.host.journal.reader import header_problems

GOOD: dict[str, Any] = {
    "type": "session",
    "v": 1,
    "id": "01J",
    "ts": 5,
    "app": "pi-desktop",
    "appVersion": "1",
    "cwd": "/p",
}

HEADERS: list[dict[str, Any]] = [
    GOOD,
    {**GOOD, "extra": {"kept": True}},
    {k: v for k, v in GOOD.items() if k not in ("id", "ts", "app")},  # defaults
    {k: v for k, v in GOOD.items() if k != "cwd"},
    {k: v for k, v in GOOD.items() if k != "appVersion"},
    {**GOOD, "id": ""},
    {**GOOD, "id": 7},
    {**GOOD, "ts": "5"},
    {**GOOD, "ts": True},
    {**GOOD, "ts": 1.5},
    {**GOOD, "app": None},
    {**GOOD, "appVersion": 1},
    {**GOOD, "cwd": ["/p"]},
    {**GOOD, "cwd": None, "appVersion": None},
]


@pytest.mark.parametrize("header", HEADERS)
def test_the_hand_check_agrees_with_the_header_model(header: dict[str, Any]) -> None:
    try:
        SessionHeader.model_validate(header)
    except pydantic.ValidationError as error:
        model_fields = sorted({str(e["loc"][0]) for e in error.errors()})
    else:
        model_fields = []
    hand_fields = sorted({problem.split(":", 1)[0] for problem in header_problems(header)})
    assert hand_fields == model_fields


def test_an_invalid_header_is_reported_on_line_one_with_its_field(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(orjson.dumps({**GOOD, "cwd": 3}) + b"\n")
    log = read_session(path)
    assert log.header is None
    assert [(d.line, d.code) for d in log.errors] == [(1, "header-invalid")]
    assert "cwd: Input should be a valid string" in log.errors[0].message
