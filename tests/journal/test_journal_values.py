"""Values no reader can carry further are set aside where the line is read (design T9).

Nesting deeper than a request can be encoded ended ``status``, ``payload`` and ``whatif`` in an
internal error ("Recursion limit reached" from orjson); an integer past 64 bits cannot cross a Qt
model to the window's views. Both are now a line set aside with its field, like a row of the
wrong shape, in Desktop journals and in pi and Claude Code files alike.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from desktop.host.foreign import read_json_lines
from desktop.host.journal import JournalWriter, UserRow, read_session
from desktop.host.journal.values import MAX_DEPTH
from tests.cli.helpers import EMULATOR_MODEL, run_main


def _session(path: Path, *extra: bytes) -> None:
    with JournalWriter.create(path, cwd=str(path.parent), app_version="t") as writer:
        writer.append([UserRow(message={"role": "user", "content": "one", "timestamp": 1})])
    with path.open("ab") as handle:
        handle.writelines(line + b"\n" for line in extra)


def _tool_call_row(row_id: str, arguments: bytes) -> bytes:
    row = {
        "type": "assistant",
        "v": 1,
        "id": row_id,
        "ts": 1,
        "message": {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "HOLE"}}],
            "stopReason": "toolUse",
            "timestamp": 1,
        },
        "route": {"provider": "p", "model": "m", "api": "anthropic-messages", "baseUrl": "http://x"},
    }
    return orjson.dumps(row).replace(b'"HOLE"', arguments)


def test_nesting_deeper_than_a_request_encodes_is_set_aside_with_its_field(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    fits = MAX_DEPTH - 6  # the row, message, content, block, arguments and path levels around it
    _session(
        path,
        _tool_call_row("fits", b"[" * fits + b"]" * fits),
        _tool_call_row("deep", b"[" * 300 + b"]" * 300),
    )

    log = read_session(path)

    assert [row["id"] for row in log.rows if row["type"] == "assistant"] == ["fits"]
    (problem,) = [d for d in log.diagnostics if d.code == "bad-value"]
    assert problem.line == 4
    assert problem.field is not None and problem.field.startswith("message.content[0].arguments.path[0]")
    for command in ("status", "payload"):
        run = run_main(command, str(path), "--workspace", str(tmp_path), "--model", EMULATOR_MODEL)
        assert run.code == 0, run.stderr
        assert "nested deeper than" in run.stderr


def test_a_foreign_line_past_64_bits_is_set_aside_with_its_field(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"type":"x","n":1}\n{"type":"user","usage":{"output_tokens":18446744073709551615}}\n')

    read = read_json_lines(path)

    assert read.lines == [1]
    (problem,) = read.diagnostics
    assert (problem.line, problem.code, problem.field) == (2, "bad-value", "usage.output_tokens")
