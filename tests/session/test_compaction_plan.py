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
from desktop.session.estimate import message_tokens
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


def test_preview_names_rows_cut_and_tokens_before_and_after() -> None:
    """The Compact button and the CLI show this before anything is sent (design C1)."""
    from desktop.session.compaction import compacted_tokens, preview_compaction

    rows = rows_for_turns(30)
    settings = CompactionSettings(keep_recent_tokens=1000)
    view = context_view(rows)
    preview = preview_compaction(view, settings)
    plan = plan_compaction(view, settings)
    assert preview.possible and preview.first_kept_id == plan.first_kept_id
    assert preview.rows == len(plan.summarized) > 0
    assert preview.tokens_before == plan.tokens_before
    assert 0 < preview.tokens_after < preview.tokens_before / 2
    assert preview.first_kept_text.startswith("u" * 10) or preview.first_kept_text == ""
    assert f"~{preview.tokens_before:,} → ~{preview.tokens_after:,} tokens" in preview.describe()
    # After the summary exists, the same estimate with its real size.
    assert compacted_tokens(plan, view, "short") < preview.tokens_after


def test_preview_says_nothing_to_compact_yet() -> None:
    from desktop.session.compaction import preview_compaction

    preview = preview_compaction(context_view(rows_for_turns(0)), CompactionSettings())
    assert not preview.possible
    assert preview.describe().startswith("nothing to compact yet: ")


def test_below_the_keep_budget_only_automatic_compaction_has_a_cut() -> None:
    """Manual compaction keeps ``keep_recent_tokens`` verbatim, so a context below it has nothing
    to compact yet, in the plan and in the preview alike; automatic compaction on an 8,192-token
    window caps the tail at a quarter of the window and summarizes the older turns (design C1)."""
    from desktop.session.compaction import preview_compaction, tail_budget

    view = context_view(rows_for_turns(20))
    settings = CompactionSettings()
    assert sum(message_tokens(m) for m in view.messages) < settings.keep_recent_tokens
    with pytest.raises(NothingToCompact, match="within the retained tail of 20,000 tokens"):
        plan_compaction(view, settings)
    preview = preview_compaction(view, settings)
    assert not preview.possible and "20,000 tokens" in preview.describe()
    assert tail_budget(settings, 8_192) == 2_048 and tail_budget(settings, 1_000_000) == 20_000
    plan = plan_compaction(view, settings, context_window=8_192)
    tail = view.messages[plan.first_kept_index :]
    assert plan.summarized and 2_048 <= sum(message_tokens(m) for m in tail) < 4_000


def test_usage_measured_before_a_compaction_is_not_trusted_after_it() -> None:
    """The retained tail's usage figures measured the uncompacted context (design C1)."""
    from desktop.session.estimate import context_tokens

    rows = rows_for_turns(10)
    for row in rows:
        if row["type"] == "assistant":
            row["message"]["usage"] = {"input": 50_000, "output": 10, "cacheRead": 0, "cacheWrite": 0}
    plan = plan_compaction(context_view(rows), CompactionSettings(keep_recent_tokens=500))
    fields = compaction_row_fields(plan, "SUMMARY", activation=None, route={"provider": "p"})
    rows.append({"type": "compaction", "id": "cmp", "ts": 5, **fields})
    view = context_view(rows)
    assert view.fresh == len(view.messages)
    assert context_tokens(view.messages) >= 50_000  # the stale figure
    assert context_tokens(view.messages, usage_from=view.fresh) < 5_000
