"""Files other tools could write open in the window as ``status`` opens them (design T9, X1).

Each case is one the structure-aware fuzz found (``tests/cli/test_fuzz.py``), kept as a named
test: the window's open and render path (``tests/cli/fuzz_window.py``: the real worker and the
window's models and views) meets a bad value in a file and sets the row aside, as the commands
do, instead of refusing the whole session.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from desktop.emulator import Emulator
from desktop.host.journal import read_session
from desktop.ui.inspect_ops import browse_listing
from desktop.ui.row_index import read_indexed
from tests.cli.fuzz_window import WindowPath
from tests.cli.helpers import lines_of, make_session, run_main, write_lines

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture
def window_path(tmp_path: Path, qapp: Any) -> Iterator[WindowPath]:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with Emulator() as emulator:
        window = WindowPath(tmp_path / "data", workspace, emulator.url)
        yield window  # the rest is the fixture's teardown, run whatever the test did
        window.close()


def _edit_assistant(path: Path, edit: Any) -> int:
    """Apply ``edit`` to the first assistant row's message; its 1-based line."""
    lines = lines_of(path)
    for number, raw in enumerate(lines):
        row = orjson.loads(raw)
        if row.get("type") == "assistant":
            edit(row["message"])
            lines[number] = orjson.dumps(row) + b"\n"
            write_lines(path, lines)
            return number + 1
    raise AssertionError("no assistant row")


def test_a_cost_total_of_text_opens_in_the_window_as_in_status(
    tmp_path: Path, window_path: WindowPath
) -> None:
    path = make_session(tmp_path, "s.jsonl", "hello", "and again")
    line = _edit_assistant(path, lambda message: message["usage"]["cost"].update(total="abc"))

    status = run_main("status", str(path), "--workspace", str(tmp_path))
    assert status.code == 0, status.stderr
    assert f"s.jsonl:{line})" in status.stderr and "message.usage.cost.total" in status.stderr

    journal = read_session(path)
    index = read_indexed(path)[1]  # the window's one pass over the file takes what the journal takes
    assert sorted(index.ids) == sorted(row["id"] for row in journal.rows)  # model order may differ

    assert window_path.open(path, previews=False) == []
    assert window_path.opened is not None
    assert any(f"line {line}: " in str(d) for d in window_path.opened.diagnostics)
    assert window_path.timeline.rowCount() >= len(journal.rows)


def test_an_integer_past_64_bits_is_set_aside_by_every_reader(
    tmp_path: Path, window_path: WindowPath
) -> None:
    """Qt cannot pass such a row from the timeline model to a view; orjson cannot write it."""
    path = make_session(tmp_path, "s.jsonl", "hello", "and again")
    lines = lines_of(path)
    number = next(n for n, raw in enumerate(lines) if orjson.loads(raw).get("type") == "assistant")
    lines[number] = lines[number].replace(b'"output":', b'"output":9223372036854775808,"was":', 1)
    write_lines(path, lines)

    status = run_main("status", str(path), "--workspace", str(tmp_path))
    assert status.code == 0 and "64-bit" in status.stderr, status.stderr
    assert orjson.loads(lines[number])["id"] not in read_indexed(path)[1].ids
    assert window_path.open(path, previews=False) == []
    assert window_path.opened is not None


def test_a_bad_transcript_under_claude_projects_does_not_break_the_browser(tmp_path: Path) -> None:
    project = tmp_path / ".claude" / "projects" / "-home-dev-demo"
    project.mkdir(parents=True)
    good = project / "7f3c2a10-5b4e-4c2d-9a61-0d2e8f4b1c33.jsonl"
    shutil.copy(FIXTURES / "claude_code" / "basic.jsonl", good)
    bad = project / "0d2e8f4b-1c33-4c2d-9a61-7f3c2a105b4e.jsonl"
    bad.write_bytes(b'{"type": {"not": "a type"}, "sessionId": [1], "uuid": 7}\n{"type": ["x"]}\n')

    listing = browse_listing(tmp_path)

    sessions = {s["path"]: s for w in listing["workspaces"] for s in w["sessions"]}
    assert set(sessions) == {str(good), str(bad)}
    assert sessions[str(good)]["problem"] is None
    assert "not a session this app can open" in sessions[str(bad)]["problem"]


def test_a_pi_entry_of_the_wrong_shape_is_set_aside_and_the_branch_goes_on(
    tmp_path: Path, window_path: WindowPath
) -> None:
    path = tmp_path / "pi.jsonl"
    lines = lines_of(FIXTURES / "pi_sessions" / "v3_compaction.jsonl")
    number = next(
        n
        for n, raw in enumerate(lines)
        if orjson.loads(raw).get("message", {}).get("role") == "system" and n > 3
    )
    row = orjson.loads(lines[number])
    row["message"]["toolsAdded"] = 7
    lines[number] = orjson.dumps(row) + b"\n"
    write_lines(path, lines)

    whatif = run_main("whatif", str(path), "--routes", "anthropic/claude-opus-5-5")
    assert whatif.code == 0, whatif.stderr
    assert f"pi.jsonl:{number + 1})" in whatif.stderr and "message.toolsAdded" in whatif.stderr

    assert window_path.open(path, previews=True) == []
    assert window_path.opened is not None
    rows = [window_path.timeline.row_at(p) for p in range(window_path.timeline.rowCount())]
    ids = [r.get("id") for r in rows if r is not None]
    assert row["id"] in ids  # kept in the tree, as a row that says it was set aside
    assert ids[-1] == orjson.loads(lines[-1])["id"]  # the branch still reaches its leaf
