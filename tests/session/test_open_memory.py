"""Opening a long session holds its lines, not its rows decoded (design G9).

A decoded row costs about four times its line, and a session used to be held decoded twice
over at open (the file split into lines, then every row as a dict). The session is opened
through the path the window's worker and the commands take (``open_session``: the journal,
the runtime's context, the activation restore and the continuation), under ``tracemalloc``;
memory is counted, not timed, so the ratios hold on a busy machine.
"""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest

from desktop.emulator import Emulator
from desktop.host.journal import JournalWriter
from desktop.session.assembly import SessionConfig
from tests.session.support import OPUS, open_, reply, tool_result
from tests.session.support import config as emulated_config

ROWS = 20_000


@pytest.fixture
def config(tmp_path: Path, emulator: Emulator) -> SessionConfig:
    """The offline route and an empty workspace, as the commands open a session."""
    return emulated_config(emulator, tmp_path / "ws")


def _long_session(path: Path, rows: int) -> None:
    """Turns of a user question, an answer with a tool call, its result; a system update
    every ten turns (the mix of the window's open benchmark)."""
    JournalWriter.create(path, cwd=str(path.parent), app_version="test").close()
    lines: list[bytes] = []
    n = turn = 0
    while n < rows:
        ts = 1_700_000_000_000 + n
        batch: list[dict[str, Any]] = []
        if turn % 10 == 0:
            message = {
                "role": "system",
                "content": "",
                "sections": {"guidance": f"rev {turn}"},
                "timestamp": ts,
            }
            batch.append(
                {
                    "type": "system",
                    "v": 1,
                    "id": f"s{n}",
                    "ts": ts,
                    "modelSystem": {"v": 1, "message": message},
                }
            )
        batch.append(
            {
                "type": "user",
                "v": 1,
                "id": f"u{n}",
                "ts": ts,
                "message": {
                    "role": "user",
                    "content": f"Question {turn}: why does test {turn % 97} fail?",
                    "timestamp": ts,
                },
            }
        )
        call = {
            "type": "toolCall",
            "id": f"c{n}",
            "name": "read",
            "arguments": {"path": f"src/m{turn % 97}.py"},
        }
        text = {"type": "text", "text": f"Answer {turn}: an off-by-one in the loop. " * 3}
        answer = reply([text, call], ts, input=120, output=80, cacheRead=4000, cacheWrite=200)
        batch.append({"type": "assistant", "v": 1, "id": f"a{n}", "ts": ts, "route": OPUS, "message": answer})
        result = tool_result(f"c{n}", "read", "def f(x):\n    return x + 1\n" * 4, ts)
        batch.append({"type": "toolResult", "v": 1, "id": f"t{n}", "ts": ts, "message": result})
        for row in batch:
            row["id"] = f"{row['id']}-{len(lines)}"
            lines.append(orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE))
        n = len(lines)
        turn += 1
    with open(path, "ab") as handle:
        handle.write(b"".join(lines))


def test_opening_a_long_session_holds_about_its_lines(tmp_path: Path, config: SessionConfig) -> None:
    # A short session first: the modules and catalogs an open loads are not the session's cost.
    small = tmp_path / "small.jsonl"
    _long_session(small, 50)
    open_(small, config).close()
    path = tmp_path / "long.jsonl"
    _long_session(path, ROWS)
    size = path.stat().st_size
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        session = open_(path, config)
        gc.collect()
        held, peak = (value - base for value in tracemalloc.get_traced_memory())
    finally:
        tracemalloc.stop()
    try:
        assert len(session.writer.rows) >= ROWS
        assert len(session.runtime.view().messages) > ROWS * 9 // 10
        # Rows held decoded cost about 4x the file (4.7x held, 6.4x at the peak, before); their
        # lines cost 1x, their ids and row numbers a little more.
        assert held / size < 2.5, f"held {held / size:.2f}x the file"
        assert peak / size < 3.0, f"peak {peak / size:.2f}x the file"
    finally:
        session.close()


def test_the_compaction_preview_reads_a_long_session_without_gathering_it(
    tmp_path: Path, config: SessionConfig
) -> None:
    """The window asks for the compaction preview at open and after every turn: it walks the
    context one message at a time and keeps none of them (design C1, G9)."""
    path = tmp_path / "long.jsonl"
    _long_session(path, ROWS)
    size = path.stat().st_size
    session = open_(path, config)
    try:
        session.runtime.preview_compaction()  # the first call's imports are not the preview's cost
        gc.collect()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            preview = session.runtime.preview_compaction()
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
        assert preview.possible and preview.rows > ROWS // 2
        assert preview.tokens_after < preview.tokens_before
        # Gathering the summarized messages decoded cost several times the file.
        assert peak / size < 0.5, f"peak {peak / size:.2f}x the file"
    finally:
        session.close()
