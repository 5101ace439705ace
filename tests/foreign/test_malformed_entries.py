"""A malformed entry in another agent's file is reported with its line and field; the rest opens.

Each case edits one field of one line of a fixture to a value of the wrong JSON type (what a
hand edit, a newer writer or a damaged file leaves) and reads the file through every view the
window and the commands use.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from desktop.session.foreign import next_request, open_foreign
from desktop.session.foreign.display import Prices, row_dict
from tests.foreign.support import CLAUDE, FIXTURES

ROLLOUT = FIXTURES / "codex" / "rollout-2026-10-06T10-00-00-0199b1c2-7d4e-7a10-9c3f-2e5d8a6b4f01.jsonl"


def _set(path: tuple[str | int, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(obj: dict[str, Any]) -> None:
        target: Any = obj
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return edit


CASES = [
    # (fixture, 1-based line, edit, the field the report names, or None when nothing is wrong to say)
    (CLAUDE / "parallel.jsonl", 3, _set(("type",), ["assistant"]), "type"),
    (CLAUDE / "parallel.jsonl", 4, _set(("message",), -1), "message"),
    (CLAUDE / "parallel.jsonl", 7, _set(("message", "content"), 7), "message.content"),
    (CLAUDE / "parallel.jsonl", 8, _set(("message", "content", 0), "x"), "message.content[0]"),
    (CLAUDE / "legacy.jsonl", 1, _set(("leafUuid",), ["x"]), None),
    (CLAUDE / "compact_orphan.jsonl", 3, _set(("subtype",), 5), None),
    (CLAUDE / "compact_orphan.jsonl", 3, _set(("compactMetadata",), 5), None),
    (ROLLOUT, 7, _set(("payload", "type"), ["reasoning"]), "payload.type"),
    (ROLLOUT, 8, _set(("payload",), "gone"), "payload"),
]


@pytest.mark.parametrize(("source", "line", "edit", "field"), CASES, ids=lambda v: getattr(v, "name", None))
def test_the_entry_is_named_and_the_rest_opens(
    source: Path, line: int, edit: Callable[[dict[str, Any]], None], field: str | None, tmp_path: Path
) -> None:
    lines = source.read_bytes().splitlines()
    obj = orjson.loads(lines[line - 1])
    edit(obj)
    lines[line - 1] = orjson.dumps(obj)
    path = tmp_path / source.name
    path.write_bytes(b"\n".join(lines) + b"\n")
    session = open_foreign(path)
    if field is not None:
        named = [d for d in session.diagnostics if d.line == line]
        assert len(named) == 1, [str(d) for d in session.diagnostics]  # one line says what is wrong
        assert named[0].field == field or f"'{field}'" in named[0].message, str(named[0])
        assert f"{path}: line {line}" in str(named[0])
    diffs, prices = session.system_diffs(None), Prices()
    rows = [row_dict(row, diffs, prices) for row in session.timeline(None)]  # as the window builds them
    assert rows and all(isinstance(row["summary"], str) for row in rows)
    for branch in session.branches():
        session.context(branch.leaf)
        session.usage(branch.leaf)
        session.request_contexts(branch.leaf)
    assert next_request(session, "anthropic/claude-opus-5-5").body["messages"]
    next_request(session, "openai/gpt-5.5")
