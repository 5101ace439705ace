"""`pi-desktop compact` says what it did in figures that change (design C1)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli.helpers import EMULATOR_MODEL, make_session, run_main


def test_compact_reports_rows_and_tokens_before_and_after(tmp_path: Path) -> None:
    path = make_session(tmp_path, "s.jsonl", *(f"turn {i} " + "words " * 400 for i in range(4)))
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


def test_compact_with_nothing_to_summarize_says_so(tmp_path: Path) -> None:
    path = make_session(tmp_path, "s.jsonl", "only one turn")
    args = ("compact", str(path), "--model", EMULATOR_MODEL, "--workspace", str(tmp_path))
    assert run_main(*args).stdout.startswith("compacted 1 rows")
    size = path.stat().st_size
    run = run_main(*args)  # only the retained tail is left
    assert run.code == 0, run.stderr
    assert run.stdout.startswith("nothing to compact yet: ")
    assert path.stat().st_size == size
