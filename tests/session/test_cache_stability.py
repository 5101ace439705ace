"""Cache stability (design P4, P6): on flagged routes every request extends the previous one.

Each request body is read in its provider's cache order by the emulator's own readers
(Anthropic: tools, system, message blocks; chat: tools, then messages; cache markers left
out). Across a session with skill and guidance changes, a tool round trip and a skill removal,
the previous request's parts must be a prefix of the next one's on a flagged route. On an
unflagged route folding rewrites the system prompt, and the test pins where the prefix breaks.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from desktop.emulator import Emulator
from desktop.emulator.conversation import read_anthropic, read_chat
from tests.session.support import config, open_


def cache_parts(path: str, body: dict[str, object]) -> list[str]:
    read = read_anthropic if path.endswith("/messages") else read_chat
    return [block.text for block in read(body).segments]


def run_session(tmp_path: Path, model: str) -> list[list[str]]:
    workspace = tmp_path / "ws"
    (workspace / ".pi" / "skills" / "lint").mkdir(parents=True)
    (workspace / "notes.txt").write_text("a note", encoding="utf-8")
    skill = workspace / ".pi" / "skills" / "lint" / "SKILL.md"
    with Emulator() as emu:
        with open_(tmp_path / "s.jsonl", config(emu, workspace, model)) as session:
            runtime = session.runtime
            runtime.run_turn("hello")
            skill.write_text("---\nname: lint\ndescription: Run linters\n---\nbody\n", encoding="utf-8")
            runtime.run_turn("skill added")
            (workspace / "AGENTS.md").write_text("Prefer small diffs.", encoding="utf-8")
            runtime.run_turn("guidance changed")
            runtime.run_turn(f"read it [[tool:read {json.dumps({'path': 'notes.txt'})}]]")
            skill.unlink()
            runtime.run_turn("skill removed")
        return [cache_parts(r.path, r.json()) for r in emu.requests]


def first_difference(before: list[str], after: list[str]) -> int | None:
    for index, part in enumerate(before):
        if index >= len(after) or after[index] != part:
            return index
    return None


@pytest.mark.parametrize("model", ["anthropic/claude-opus-5-5", "deepseek/deepseek-flash"])
def test_flagged_routes_only_ever_append(tmp_path: Path, model: str) -> None:
    requests = run_session(tmp_path, model)
    assert len(requests) == 6  # five turns, one of them with a tool round trip
    for number, (before, after) in enumerate(itertools.pairwise(requests), start=1):
        assert first_difference(before, after) is None, (
            f"request {number + 1} rewrote part of request {number}"
        )
        assert len(after) > len(before)


def test_unflagged_route_breaks_the_prefix_at_the_system_prompt(tmp_path: Path) -> None:
    requests = run_session(tmp_path, "anthropic/claude-sonnet-5")
    breaks = []
    for before, after in itertools.pairwise(requests):
        index = first_difference(before, after)
        if index is not None:
            breaks.append((index, before[index].split(":", 1)[0]))
    # Folding rewrites the leading system prompt whenever a section changes: three changes,
    # three breaks, each at the system block right after the (fixed) tool list.
    assert [kind for _, kind in breaks] == ["system", "system", "system"], breaks
    assert len({index for index, _ in breaks}) == 1
