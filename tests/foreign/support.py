"""Shared paths and helpers for the foreign-session tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

from desktop.session.foreign import ClaudeSession, PiSession, open_foreign

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PI = FIXTURES / "pi_sessions"
CLAUDE = FIXTURES / "claude_code"
PI_FILES = sorted(p.name for p in PI.glob("*.jsonl"))


def pi_expected() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((PI / "expected.json").read_text(encoding="utf-8"))
    return data


def as_json(value: Any) -> Any:
    """What JSON.stringify would make of ``value`` (the oracle's side went through it)."""
    return json.loads(json.dumps(value))


def pi_session(path: Path) -> PiSession:
    opened = open_foreign(path)
    assert isinstance(opened, PiSession)
    return opened


def claude_session(path: Path) -> ClaudeSession:
    opened = open_foreign(path)
    assert isinstance(opened, ClaudeSession)
    return opened


def append_lines(path: Path, *entries: Any) -> None:
    """Append each entry to the JSON Lines file ``path``, one line each."""
    with path.open("ab") as handle:
        handle.write(b"".join(orjson.dumps(entry) + b"\n" for entry in entries))
