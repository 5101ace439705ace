"""One schema for the rows a session holds (design T10, T12): what the writer accepts the reader
accepts, and a message reads the same in every timeline."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from desktop.host.journal import JournalWriter, LocalPreparationFailure, UserRow, read_session
from desktop.session.foreign.model import ASSISTANT, TimelineRow
from desktop.session.foreign.model import row_summary as foreign_summary
from desktop.ui.rowinfo import row_summary as desktop_summary

ROUTE = {"provider": "p", "model": "m", "api": "anthropic-messages", "baseUrl": "u"}


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"type": "user", "message": {"role": "user"}}, "message.content"),
        ({"type": "toolResult", "message": {"role": "toolResult", "content": []}}, "message.toolCallId"),
        (
            {
                "type": "assistant",
                "message": {"role": "assistant", "content": [{"type": "text"}]},
                "route": ROUTE,
            },
            "message.content[0].text",
        ),
        ({"type": "system", "modelSystem": {"v": 1, "message": {"role": "system", "content": 3}}}, "content"),
    ],
)
def test_the_writer_refuses_a_row_the_reader_would_set_aside(
    tmp_path: Path, row: dict[str, Any], field: str
) -> None:
    path = tmp_path / "s.jsonl"
    refused = pytest.raises(LocalPreparationFailure, match=re.escape(field))
    with JournalWriter.create(path, cwd=tmp_path, app_version="t") as writer, refused:
        writer.append([{**row, "v": 1, "id": "r1", "ts": 1}])
    log = read_session(path)
    assert len(log.rows) == 0 and log.diagnostics == []


def test_a_message_reads_the_same_in_a_desktop_and_a_foreign_timeline() -> None:
    message = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "first I look"},
            {"type": "text", "text": "Done.\x1b[31m red\x1b[0m"},
            {"type": "toolCall", "id": "c", "name": "bash", "arguments": {"command": "printf 'a\\nb'"}},
        ],
        "stopReason": "toolUse",
    }
    desktop = desktop_summary({"type": "assistant", "v": 1, "id": "a", "message": message, "route": ROUTE})
    foreign = foreign_summary(TimelineRow("a", ASSISTANT, 1, {}, message))
    assert desktop == foreign == "Done. red → bash(command='printf 'a\\nb'') (thinking) first I look"


def test_the_writer_checks_a_row_built_in_code_as_the_reader_would(tmp_path: Path) -> None:
    """A struct is not checked when it is built; the writer checks it before it is written."""
    path = tmp_path / "s.jsonl"
    row = UserRow(id="r1", ts=1, message={"role": "user"})
    refused = pytest.raises(LocalPreparationFailure, match=re.escape("message.content is missing"))
    with JournalWriter.create(path, cwd=tmp_path, app_version="t") as writer, refused:
        writer.append([row])
    assert len(read_session(path).rows) == 0
