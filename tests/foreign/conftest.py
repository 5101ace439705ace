"""Fixtures for foreign sessions: pi files written by pi itself, Claude Code files by hand."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.foreign.support import CLAUDE, PI


@pytest.fixture
def copy_fixture(tmp_path: Path) -> Callable[[str], Path]:
    """Copy a fixture ("pi_sessions/x.jsonl" style names) into its own tmp folder, for tests that
    edit it or watch the folder."""

    def copy(name: str) -> Path:
        folder, _, file = name.partition("/")
        source = (PI if folder == "pi_sessions" else CLAUDE) / file
        target = tmp_path / "source" / file
        target.parent.mkdir(exist_ok=True)
        target.write_bytes(source.read_bytes())
        return target

    return copy
