"""`pi-desktop compact` says what it did in figures that change (design C1).

The sessions that compact are above the default retained-tail budget (20,000 tokens); one
below it has nothing to compact yet."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli.helpers import EMULATOR_MODEL, make_session, run_main


def test_compact_reports_rows_and_tokens_before_and_after(tmp_path: Path) -> None:
    path = make_session(tmp_path, "s.jsonl", *(f"turn {i} " + "words " * 2000 for i in range(8)))
    run = run_main("compact", str(path), "--model", EMULATOR_MODEL, "--workspace", str(tmp_path))
    assert run.code == 0, run.stderr
    match = re.search(r"compacted (\d+) rows: ~([\d,]+) → ~([\d,]+) tokens", run.stdout)
    assert match, run.stdout
    rows, before, after = int(match[1]), int(match[2].replace(",", "")), int(match[3].replace(",", ""))
    assert rows > 0 and after < before
    row = json.loads(path.read_text().splitlines()[-1])
    assert row["type"] == "compaction" and row["rowsSummarized"] == rows and row["tokensAfter"] == after
    status = run_main("status", str(path), "--workspace", str(tmp_path), "--json")
    assert json.loads(status.stdout)["contextTokens"] < before


def test_compact_below_the_keep_budget_says_nothing_to_compact_yet(tmp_path: Path) -> None:
    """A session whose context fits in the retained tail is left as it is: exit 0, the reason on
    stdout, no row appended (design C1)."""
    path = make_session(tmp_path, "s.jsonl", "only one turn", "and a second " + "words " * 400)
    size = path.stat().st_size
    run = run_main("compact", str(path), "--model", EMULATOR_MODEL, "--workspace", str(tmp_path))
    assert run.code == 0, run.stderr
    assert run.stdout.startswith("nothing to compact yet: "), run.stdout
    assert "20,000 tokens" in run.stdout and "compacted" not in run.stdout
    assert path.stat().st_size == size
