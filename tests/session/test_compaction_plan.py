"""Compaction planning: tail budget, never splitting a tool call from its result, checkpoint at the cut."""

from __future__ import annotations

from typing import Any

import pytest

from desktop.session.compaction import (
    CompactionSettings,
    NothingToCompact,
    compaction_row_fields,
    plan_compaction,
    summary_request_context,
)
from desktop.session.history import context_view


def rows_for_turns(turns: int, size: int = 400) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [
        {
            "type": "system",
            "id": "s0",
            "modelSystem": {
                "v": 1,
                "message": {"role": "system", "content": "", "sections": {"runtime": "R"}, "timestamp": 0},
            },
        }
    ]
    for i in range(turns):
        call = {"type": "toolCall", "id": f"c{i}", "name": "read", "arguments": {"path": "x"}}
        rows += [
            {
                "type": "user",
                "id": f"u{i}",
                "message": {"role": "user", "content": "u" * size, "timestamp": i},
            },
            {
                "type": "assistant",
                "id": f"a{i}",
                "message": {"role": "assistant", "content": [call], "stopReason": "toolUse"},
            },
            {
                "type": "toolResult",
                "id": f"t{i}",
                "message": {
                    "role": "toolResult",
                    "toolCallId": f"c{i}",
                    "toolName": "read",
                    "content": [{"type": "text", "text": "r" * size}],
                    "isError": False,
                },
            },
            {
                "type": "system",
                "id": f"s{i + 1}",
                "modelSystem": {
                    "v": 1,
                    "message": {"role": "system", "content": "", "sections": {f"k{i}": "v"}, "timestamp": i},
                },
            },
        ]
    return rows


def test_cut_respects_budget_and_never_starts_at_a_tool_result() -> None:
    rows = rows_for_turns(30)
    plan = plan_compaction(context_view(rows), CompactionSettings(keep_recent_tokens=1000))
    view = context_view(rows)
    assert view.messages[plan.first_kept_index]["role"] in ("user", "assistant")
    kept_ids = {r["id"] for r in view.sources[plan.first_kept_index :]}
    # every tool call kept has its result kept, and vice versa
    for i in range(30):
        assert (f"a{i}" in kept_ids) == (f"t{i}" in kept_ids)
    # the checkpoint holds exactly the sections set before the cut
    cut_turn = int(plan.first_kept_id[1:])
    assert set(plan.checkpoint["sections"]) == {"runtime", *(f"k{i}" for i in range(cut_turn))}


def test_compacted_view_leads_with_checkpoint_then_summary_then_tail() -> None:
    rows = rows_for_turns(10)
    plan = plan_compaction(context_view(rows), CompactionSettings(keep_recent_tokens=500))
    fields = compaction_row_fields(plan, "SUMMARY", activation=None, route={"provider": "p"})
    rows.append({"type": "compaction", "id": "cmp", "ts": 5, **fields})
    view = context_view(rows)
    assert view.messages[0]["role"] == "system" and view.messages[0] == plan.checkpoint
    assert "SUMMARY" in view.messages[1]["content"][0]["text"]
    assert view.sources[2]["id"] == plan.first_kept_id
    assert view.prefix == 2 and view.previous_summary == "SUMMARY"
    # a second compaction summarizes incrementally
    again = plan_compaction(view, CompactionSettings(keep_recent_tokens=100))
    assert (
        "<previous-summary>"
        in summary_request_context(again, timestamp=1)["messages"][0]["content"][0]["text"]
    )


def test_nothing_to_compact_is_a_clear_error() -> None:
    with pytest.raises(NothingToCompact):
        plan_compaction(context_view(rows_for_turns(0)), CompactionSettings())
