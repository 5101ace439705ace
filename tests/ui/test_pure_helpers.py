"""The window's pure parts: row summaries, section diffs, payload offsets, usage sums."""

from __future__ import annotations

import json

import orjson

from desktop.pi.transcript import current_system_message
from desktop.session.history import context_view
from desktop.session.inspector.payload_text import char_offset, common_prefix, common_suffix, pretty_json
from desktop.session.inspector.section_diff import section_diff, state_before
from desktop.ui import rowinfo
from desktop.ui.usage_stats import totals, usage_lines
from tests.ui.synthetic import assistant_row, compaction_row, note_row, system_row, tool_row, usage, user_row


def test_kinds_and_summaries_tell_rows_apart() -> None:
    rows = [
        user_row("u", "hello   there\nfriend"),
        assistant_row("a", "hi"),
        assistant_row("e", "", stop="error"),
        tool_row("t", "bash", "boom", error=True),
        system_row("s", {"x": "1"}, label="sections: x"),
        compaction_row("c", "u", "done", 1234),
        note_row("n", "fallback reason"),
        note_row("n2", "disk full", level="error"),
        {"type": "future-kind", "v": 1, "id": "f", "ts": 1},
    ]
    kinds = [rowinfo.row_kind(r) for r in rows]
    assert kinds == [
        rowinfo.USER,
        rowinfo.ASSISTANT,
        rowinfo.ERROR,
        rowinfo.TOOL,
        rowinfo.SYSTEM,
        rowinfo.COMPACTION,
        rowinfo.NOTE,
        rowinfo.ERROR,
        rowinfo.OTHER,
    ]
    assert rowinfo.row_summary(rows[0]) == "hello there friend"
    assert rowinfo.row_summary(rows[3]).startswith("bash ✗ boom")
    assert "compacted 1,234 tokens" in rowinfo.row_summary(rows[5])
    assert "unknown row type 'future-kind'" in rowinfo.row_summary(rows[8])
    assert "x" in rowinfo.row_search_text(rows[4])


def test_section_diff_uses_the_state_just_before_the_row_in_model_order() -> None:
    rows = [
        system_row("s0", {"runtime": "v1", "guidance": "old rules", "skill:a": "A"}, tools=["read"]),
        user_row("u0", "hi"),
        assistant_row("a0", "hello"),
        system_row(
            "s1", {"guidance": "new rules", "skill:a": None, "skill:b": "B"}, before="u1", tools=["grep"]
        ),
        user_row("u1", "again"),
    ]
    before = state_before(rows, 3)
    assert before is not None and before["sections"]["guidance"] == "old rules"
    diff = section_diff(rows, 3)
    by_name = {c.name: c for c in diff.changes}
    assert by_name["guidance"].status == "changed"
    assert (by_name["guidance"].before, by_name["guidance"].after) == ("old rules", "new rules")
    assert by_name["skill:a"].status == "removed" and by_name["skill:a"].before == "A"
    assert by_name["skill:b"].status == "added" and by_name["skill:b"].before is None
    assert diff.tools_added == ["grep"]
    assert diff.anchored_before == "u1"
    assert (diff.sections_before, diff.sections_after) == (3, 3)


def test_section_diff_reports_rows_the_model_never_sees() -> None:
    row = system_row("s", {"a": "b"})
    row["modelSystem"]["v"] = 99
    diff = section_diff([row], 0)
    assert diff.problem and "not part of the model's context" in diff.problem
    assert section_diff([user_row("u", "x")], 0).problem


def test_section_diff_after_a_compaction_starts_from_the_checkpoint() -> None:
    checkpoint = {"role": "system", "content": "", "sections": {"runtime": "v2"}, "timestamp": 1}
    rows = [
        system_row("s0", {"runtime": "v1", "extra": "gone later"}),
        user_row("u0", "hi"),
        compaction_row("c", "u0", checkpoint=checkpoint),
        system_row("s1", {"runtime": "v3"}),
    ]
    compaction = {c.name: c for c in section_diff(rows, 2).changes}
    assert compaction["runtime"].status == "changed" and compaction["extra"].status == "dropped"
    after = {c.name: c for c in section_diff(rows, 3).changes}
    assert after["runtime"].before == "v2"


def test_pretty_json_maps_every_raw_offset_and_round_trips() -> None:
    data = {"model": "m", "messages": [{"role": "user", "content": "a,b:{[c]}"}, {"x": []}], "é": {}}
    raw = orjson.dumps(data).decode()
    pretty = pretty_json(raw)
    assert json.loads(pretty.text) == data
    for token in ('"messages"', '"a,b:{[c]}"', '"é"', "[]"):
        at = raw.index(token)
        assert pretty.text[pretty.position(at) : pretty.position(at) + len(token)] == token


def test_common_prefix_is_where_the_bodies_first_differ() -> None:
    previous = orjson.dumps({"system": "s", "messages": [1, 2]})
    current = orjson.dumps({"system": "s", "messages": [1, 2, 3]})
    at = common_prefix(previous, current)
    assert previous[:at] == current[:at] and current[at : at + 1] == b","
    assert common_prefix(b"same", b"same") == 4
    assert common_prefix(b"", b"abc") == 0
    body = "ééx".encode()
    assert char_offset(body, 2) == 1 and char_offset(body, 3) == 1


def test_usage_totals_and_hit_ratio() -> None:
    rows = [
        assistant_row("a1", "x", u=usage(1000, 0, 800, 50, 0.01)),
        user_row("u", "y"),
        assistant_row("a2", "x", u=usage(100, 1800, 0, 40, 0.002)),
    ]
    lines = usage_lines(rows)
    assert [line.row_id for line in lines] == ["a1", "a2"]
    assert lines[0].hit_ratio == 0
    assert lines[1].hit_ratio == 1800 / 1900
    total = totals(lines)
    assert (total.requests, total.input, total.cache_read, total.cache_write, total.output) == (
        2,
        1100,
        1800,
        800,
        90,
    )
    assert abs(total.cost - 0.012) < 1e-9


def test_common_suffix_never_overlaps_the_prefix() -> None:
    previous = b'{"messages":[1],"tools":[]}'
    current = b'{"messages":[1,2],"tools":[]}'
    prefix = common_prefix(previous, current)
    tail = common_suffix(previous, current, prefix)
    assert current[prefix : len(current) - tail] == b",2"
    assert common_suffix(b"aaaa", b"aaaa", 4) == 0


def test_state_before_matches_a_full_replay_at_every_row() -> None:
    checkpoint = {"role": "system", "content": "", "sections": {"runtime": "v2", "kept": "k"}, "timestamp": 1}
    rows = [
        system_row("s0", {"runtime": "v1", "extra": "x"}),
        user_row("u0", "a"),
        assistant_row("a0", "b"),
        system_row("s1", {"extra": None, "kept": "k0"}, before="u1"),
        user_row("u1", "c"),
        assistant_row("a1", "d"),
        compaction_row("c", "s1", tokens_before=9, checkpoint=checkpoint),
        system_row("s2", {"runtime": "v3"}),
        user_row("u2", "e"),
    ]
    for index in range(len(rows) + 1):
        full = current_system_message(context_view(rows[:index]).messages)
        assert state_before(rows, index) == (dict(full) if full else None), index


def test_compaction_row_says_rows_and_tokens_before_and_after() -> None:
    row = {
        "type": "compaction",
        "id": "c",
        "rowsSummarized": 12,
        "tokensBefore": 31_000,
        "tokensAfter": 4_200,
    }
    assert rowinfo.row_summary(row).startswith("compacted 12 rows: ~31,000 → ~4,200 tokens")


def test_an_answer_with_thinking_shows_the_answer_first() -> None:
    row = {
        "type": "assistant",
        "id": "a",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "long musing"},
                {"type": "text", "text": "The fix."},
            ],
            "stopReason": "stop",
        },
    }
    assert rowinfo.row_summary(row).startswith("The fix.")
    assert "long musing" in rowinfo.row_search_text(row)
