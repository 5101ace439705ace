"""Row models (design T1, T2, T7): shapes, unknown fields kept, ids unique and time-ordered."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from desktop.host.journal import (
    SCHEMA_VERSION,
    AssistantRow,
    CompactionRow,
    ModelSystem,
    NoteRow,
    OpaqueRow,
    SystemRow,
    ToolResultRow,
    UserRow,
    new_row_id,
    parse_row,
)
from desktop.host.journal.rows import LaterMetadata

SYSTEM = {"role": "system", "content": "c", "sections": {"skill:a": "x", "skill:b": None}, "timestamp": 1}


def test_ids_are_unique_and_sort_in_creation_order() -> None:
    ids = [new_row_id() for _ in range(20_000)]
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids)
    assert all(len(i) == 26 for i in ids)


def test_ids_differ_between_processes_started_together() -> None:
    code = "from desktop.host.journal import new_row_id; print(*[new_row_id() for _ in range(2000)])"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
        for _ in range(2)
    ]
    outputs = [set(p.communicate(timeout=60)[0].split()) for p in procs]
    assert len(outputs[0]) == len(outputs[1]) == 2000
    assert not outputs[0] & outputs[1]


def test_every_row_type_round_trips_with_unknown_fields() -> None:
    """Unknown fields, their order and nulls inside payloads survive the models (design T7, T10)."""
    rows = [
        {
            "type": "user",
            "v": 1,
            "id": "u",
            "ts": 1,
            "message": {"content": "hi", "role": "user", "later": [1, 2.5]},
            "x": {"y": None},
        },
        {
            "type": "assistant",
            "v": 1,
            "id": "a",
            "ts": 2,
            "message": {"role": "assistant", "content": [], "stopReason": "stop"},
            "route": {"provider": "p", "model": "m", "api": "openai-responses", "baseUrl": "u", "future": 1},
            "extra": None,
        },
        {
            "type": "toolResult",
            "v": 1,
            "id": "t",
            "ts": 3,
            "message": {
                "role": "toolResult",
                "toolCallId": "c",
                "toolName": "read",
                "content": [],
                "isError": False,
            },
        },
        {
            "type": "system",
            "v": 1,
            "id": "s",
            "ts": 4,
            "modelSystem": {"v": 1, "message": SYSTEM},
            "before": "u",
        },
        {
            "type": "compaction",
            "v": 1,
            "id": "c",
            "ts": 5,
            "summary": "so far",
            "firstKeptId": "u",
            "tokensBefore": 1234,
            "checkpoint": {"v": 1, "message": SYSTEM, "activation": None, "route": {"model": "m"}},
        },
        {
            "type": "note",
            "v": 1,
            "id": "n",
            "ts": 6,
            "level": "warning",
            "text": "fell back",
            "data": {"k": 1},
        },
        {"type": "bookmark", "v": 1, "id": "b", "ts": 7, "anything": [1, 2]},
    ]
    kinds = [UserRow, AssistantRow, ToolResultRow, SystemRow, CompactionRow, NoteRow, OpaqueRow]
    for raw, kind in zip(rows, kinds, strict=True):
        model = parse_row(raw)
        assert type(model) is kind
        assert model.to_json() == raw  # nothing added, nothing lost, nulls inside payloads kept


def test_models_fill_the_envelope_and_omit_absent_optionals() -> None:
    row = SystemRow(modelSystem=ModelSystem(message=SYSTEM), label="skills changed")
    data = row.to_json()
    assert data["type"] == "system" and data["v"] == SCHEMA_VERSION and isinstance(data["ts"], int)
    assert "before" not in data and data["modelSystem"] == {"v": 1, "message": SYSTEM}
    assert NoteRow(level="info", text="t").to_json().keys() == {"type", "v", "id", "ts", "level", "text"}


def test_unknown_model_system_version_is_kept_but_flagged() -> None:
    raw = {"type": "system", "v": 1, "id": "s", "ts": 1, "modelSystem": {"v": 7, "blob": "opaque"}}
    row = parse_row(raw)
    assert isinstance(row, SystemRow) and isinstance(row.modelSystem, LaterMetadata)
    assert row.to_json() == raw


@pytest.mark.parametrize(
    "raw",
    [
        {"type": "user", "v": 1, "id": "u", "ts": 1, "message": {"role": "assistant"}},
        {"type": "user", "v": 1, "id": "u", "ts": "1", "message": {"role": "user"}},
        {"type": "assistant", "v": 1, "id": "a", "ts": 1, "message": {"role": "assistant"}},
        {"type": "system", "v": 1, "id": "s", "ts": 1, "modelSystem": {"v": 1}},
        {"type": "note", "v": 1, "id": "n", "ts": 1, "level": "loud", "text": "x"},
        {"type": "compaction", "v": 1, "id": "c", "ts": 1, "summary": "s", "firstKeptId": "u"},
    ],
)
def test_malformed_known_rows_are_rejected(raw: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        parse_row(raw)
