"""Whole turns through the real parts: journal on disk, projection, loopback emulator, tool gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.emulator import Emulator
from desktop.emulator.faults import Fault
from desktop.host.journal import LocalPreparationFailure, model_order
from desktop.pi.text import system_message_text
from desktop.session.assembly import OpenSession
from desktop.session.compaction import NothingToCompact
from desktop.session.runtime import SummaryFailed
from tests.session.support import config, open_


def kinds(session: OpenSession) -> list[str]:
    return [r["type"] for r in session.writer.rows]


def test_turn_with_tool_call_and_cache_growth(tmp_path: Path, emulator: Emulator) -> None:
    cfg = config(emulator, tmp_path / "ws")
    (cfg.workspace / "notes.txt").write_text("remember the milk", encoding="utf-8")
    with open_(tmp_path / "s.jsonl", cfg) as session:
        assert kinds(session) == []  # opening writes nothing, a new session included
        first = session.runtime.run_turn("hello there " + "padding " * 600)
        user, baseline = session.writer.rows[0], session.writer.rows[1]
        assert (user["type"], baseline["type"]) == ("user", "system")
        assert baseline["before"] == user["id"]  # the baseline goes to the model ahead of it (T4)
        assert first.stopped == "stop"
        assert first.assistant[-1]["content"][0]["text"].startswith("Echo: hello there")

        call = json.dumps({"path": "notes.txt"})
        second = session.runtime.run_turn(f"please read [[tool:read {call}]]")
        assert second.requests == 2 and second.stopped == "stop"
        results = [r for r in session.writer.rows if r["type"] == "toolResult"]
        assert "remember the milk" in results[-1]["message"]["content"][0]["text"]
        assert "Tool read returned" in second.assistant[-1]["content"][0]["text"]

        third = session.runtime.run_turn("and again")
        reads = [m["usage"]["cacheRead"] for m in (*first.assistant, *second.assistant, *third.assistant)]
        assert reads[0] == 0 and reads[-1] > reads[1] > 0, reads


def test_skill_added_between_turns_is_anchored_before_the_user_row(
    tmp_path: Path, emulator: Emulator
) -> None:
    cfg = config(emulator, tmp_path / "ws")
    with open_(tmp_path / "s.jsonl", cfg) as session:
        session.runtime.run_turn("first")
        skill = cfg.workspace / ".pi" / "skills" / "lint" / "SKILL.md"
        skill.parent.mkdir(parents=True)
        skill.write_text("---\nname: lint\ndescription: Run the linters\n---\nRun ruff.\n", encoding="utf-8")
        session.runtime.run_turn("second")
        rows = list(session.writer.rows)
        user = next(r for r in reversed(rows) if r["type"] == "user")
        update = next(r for r in rows if r["type"] == "system" and r.get("before") == user["id"])
        assert rows.index(update) > rows.index(user)  # journaled after the pre-persisted user row
        ordered = model_order(rows)
        assert ordered.index(update) == ordered.index(user) - 1  # but the model sees it first
        assert list(update["modelSystem"]["message"]["sections"]) == ["skill:lint"]
        body = emulator.requests[-1].json()
        texts = [b.get("text", "") for m in body["messages"] if m["role"] == "system" for b in m["content"]]
        assert any('Updated system prompt section "skill:lint"' in t for t in texts)


def test_compaction_across_restart(tmp_path: Path, emulator: Emulator) -> None:
    cfg = config(emulator, tmp_path / "ws")
    cfg.compaction = type(cfg.compaction)(keep_recent_tokens=50)
    path = tmp_path / "s.jsonl"
    with open_(path, cfg) as session:
        for i in range(4):
            session.runtime.run_turn(f"turn {i} " + "words " * 100)
        before = list(session.writer.rows)
        emulator.inject(Fault("server_error"), times=5)
        with pytest.raises(SummaryFailed, match="not changed"):
            session.runtime.compact()
        assert list(session.writer.rows) == before  # a failed summary leaves the session as it was
        emulator.clear_faults()
        row = session.runtime.compact()
        assert row["type"] == "compaction" and "## Goal" in row["summary"]
    with open_(path, cfg) as session:
        view = session.runtime.view()
        assert view.messages[0]["role"] == "system"
        assert view.messages[0] == row["checkpoint"]["message"]
        assert "compacted" in view.messages[1]["content"][0]["text"]
        assert view.sources[2]["id"] == row["firstKeptId"]
        assert kinds(session)[-1] == "compaction"  # reopening appended nothing
        result = session.runtime.run_turn("after the restart")
        assert result.stopped == "stop"
        sent = emulator.requests[-1].json()
        # The restored checkpoint is the request's system prompt, ahead of the summary and the tail.
        assert sent["system"][0]["text"] == system_message_text(view.messages[0])
        assert "compacted" in json.dumps(sent["messages"][0])


def test_second_continuation_appends_nothing(tmp_path: Path, emulator: Emulator) -> None:
    cfg = config(emulator, tmp_path / "ws")
    path = tmp_path / "s.jsonl"
    with open_(path, cfg) as session:
        session.runtime.run_turn("hi")
        count = len(session.writer.rows)
    for _ in range(2):
        with open_(path, cfg) as session:
            assert len(session.writer.rows) == count


def test_read_only_second_opener(tmp_path: Path, emulator: Emulator) -> None:
    cfg = config(emulator, tmp_path / "ws")
    path = tmp_path / "s.jsonl"
    with open_(path, cfg) as first, open_(path, cfg) as second:
        assert not first.read_only and second.read_only
        assert "read-only" in (second.writer.read_only_reason or "")
        with pytest.raises(LocalPreparationFailure, match=r"read-only|open for writing"):
            second.runtime.run_turn("should not be written")


def test_manual_compaction_below_the_keep_budget_changes_nothing(tmp_path: Path, emulator: Emulator) -> None:
    """Below the retained-tail budget, manual compaction says so: no request, no row (design C1)."""
    cfg = config(emulator, tmp_path / "ws")
    with open_(tmp_path / "s.jsonl", cfg) as session:
        for i in range(3):
            session.runtime.run_turn(f"turn {i} " + "words " * 300)
        assert session.runtime.context_tokens() < cfg.compaction.keep_recent_tokens
        rows, requests = list(session.writer.rows), len(emulator.requests)
        preview = session.runtime.preview_compaction()
        assert not preview.possible and preview.describe().startswith("nothing to compact yet: ")
        with pytest.raises(NothingToCompact, match="retained tail of 20,000 tokens"):
            session.runtime.compact()
        assert list(session.writer.rows) == rows and len(emulator.requests) == requests


def test_automatic_compaction_on_a_window_smaller_than_the_keep_budget(
    tmp_path: Path, emulator: Emulator
) -> None:
    """An 8,192-token window is below the 20,000-token keep budget; automatic compaction caps the
    tail by the window and still summarizes the older turns (design C1)."""
    cfg = config(emulator, tmp_path / "ws", model="openai/gpt-4")
    with open_(tmp_path / "s.jsonl", cfg) as session:
        assert session.resolved.model["contextWindow"] == 8_192
        for i in range(4):
            session.runtime.run_turn(f"turn {i} " + "words " * 600)
        compactions = [r for r in session.writer.rows if r["type"] == "compaction"]
        assert compactions and all(r["reason"] == "automatic" for r in compactions)
        assert all(r["rowsSummarized"] > 0 and r["tokensAfter"] < r["tokensBefore"] for r in compactions)
        assert session.writer.rows[-1]["type"] == "assistant"


def test_automatic_compaction_at_the_threshold(tmp_path: Path, emulator: Emulator) -> None:
    cfg = config(emulator, tmp_path / "ws")
    window = 1_000_000  # claude-opus-5-5's published context window
    cfg.compaction = type(cfg.compaction)(reserve_tokens=window - 4_000, keep_recent_tokens=300)
    with open_(tmp_path / "s.jsonl", cfg) as session:
        assert session.resolved.model["contextWindow"] == window
        for i in range(8):
            session.runtime.run_turn(f"turn {i} " + "words " * 300)
        compactions = [r for r in session.writer.rows if r["type"] == "compaction"]
        assert compactions and all(r["reason"] == "automatic" for r in compactions)
        # After compacting, the context is back under the threshold and the turn still ran.
        assert session.runtime.context_tokens() < cfg.compaction.threshold(window) + 2_000
        assert session.writer.rows[-1]["type"] == "assistant"
