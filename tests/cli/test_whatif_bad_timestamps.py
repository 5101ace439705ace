"""Bad timestamps in a real transcript: "time unknown", the warm assumption stated, no crash
(design P9).

A real Claude Code file (``tests/fixtures/claude_code_real``) with one reply's timestamp
removed, or one moved before the reply it follows, or one that is not a date, or the last one
in the future (a clock set wrong where the file was written): `whatif` still
replays it, says time is unknown and that caches are assumed unexpired, and `status` reads it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.helpers import run_main

SOURCE = Path(__file__).resolve().parents[1] / "fixtures" / "claude_code_real" / "subagent.jsonl"


@pytest.mark.parametrize(
    ("timestamp", "last"),
    [
        (None, False),
        ("2001-01-01T00:00:00.000Z", False),
        ("around noon", False),
        ("2099-01-01T00:00:00.000Z", True),
    ],
    ids=["missing", "out-of-order", "not-a-date", "in-the-future"],
)
def test_whatif_says_time_unknown_and_assumes_warm(timestamp: str | None, last: bool, tmp_path: Path) -> None:
    lines = SOURCE.read_text(encoding="utf-8").splitlines()
    replies = [i for i, line in enumerate(lines) if '"type":"assistant"' in line and '"usage"' in line]
    target = replies[-1] if last else replies[len(replies) // 2]
    entry = json.loads(lines[target])
    if timestamp is None:
        del entry["timestamp"]
    else:
        entry["timestamp"] = timestamp
    lines[target] = json.dumps(entry)
    path = tmp_path / "spoiled.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = run_main("whatif", str(path), "--json", "--routes", "anthropic/claude-opus-4-6")
    assert run.code == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["assumptions"][0].startswith("Time unknown")
    assert "assumed unexpired" in report["assumptions"][0]
    status = run_main("status", str(path), "--json")
    assert status.code == 0, status.stderr
