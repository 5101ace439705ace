"""The grep tool's pattern comes from the model: it is matched by RE2, in time linear in the
line, so no pattern can hold the interpreter while Stop or SIGTERM waits (design X20)."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.host.tools.grep import run
from desktop.host.tools.types import ToolContext, ToolFailure
from tests.tools.conftest import text_of, tool_in_child

#: Exponential for a backtracking engine on a line of a's that ends in another letter.
NESTED = "(a+)+$"


def test_a_catastrophic_pattern_returns_at_once(tmp_path: Path) -> None:
    """Before: Python's ``re`` backtracked 2**60 ways on the one line (the test's subprocess
    timed out); RE2 answers "no match"."""
    (tmp_path / "long.txt").write_text("a" * 60 + "b\n")
    assert tool_in_child("grep", tmp_path, NESTED, timeout=120) == "No matches found"


def test_patterns_match_as_ripgrep_reads_them(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Needle one\nneedle two\nhay\n")
    ctx = ToolContext(tmp_path)
    assert text_of(run({"pattern": "needle"}, ctx)).splitlines() == ["a.txt:2: needle two"]
    found = text_of(run({"pattern": "NEEDLE", "ignoreCase": True}, ctx)).splitlines()
    assert found == ["a.txt:1: Needle one", "a.txt:2: needle two"]
    assert text_of(run({"pattern": "n.e", "literal": True}, ctx)) == "No matches found"


def test_lookaround_is_refused_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    with pytest.raises(ToolFailure, match=r"RE2, like ripgrep.*literal=true"):
        run({"pattern": "a(?=b)"}, ToolContext(tmp_path))
