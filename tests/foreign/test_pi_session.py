"""pi sessions as the window sees them: timeline rows, branches, section diffs, bad input (X1, T9)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from desktop.session.foreign import BranchNotFound, kinds
from tests.foreign.support import PI, PI_FILES, append_lines
from tests.foreign.support import pi_session as session


def text_of(row_message: object) -> str:
    assert isinstance(row_message, dict)
    content = row_message["content"]
    return content if isinstance(content, str) else " ".join(b.get("text", "") for b in content)


def test_the_current_branch_timeline_root_first_with_every_entry_kind() -> None:
    opened = session(PI / "v3_branches.jsonl")
    rows = opened.timeline()
    assert rows[-1].id == opened.default_leaf == opened.entries[-1]["id"]  # the leaf is the last entry
    assert [r.kind for r in rows] == [
        kinds.MODEL_CHANGE,
        kinds.THINKING_LEVEL,
        kinds.SYSTEM,
        kinds.USER,
        kinds.ASSISTANT,
        kinds.TOOL,
        kinds.ASSISTANT,
        kinds.TOOL,
        kinds.ASSISTANT,
        kinds.LABEL,
        kinds.BASH,
        kinds.BASH,
        kinds.BASH,
        kinds.CUSTOM,
        kinds.CUSTOM_MESSAGE,
        kinds.CUSTOM_MESSAGE,
        kinds.USER,
        kinds.ASSISTANT,
        kinds.SESSION_INFO,
        kinds.USAGE,
        kinds.LABEL,
    ]
    assert [r.line for r in rows] == sorted(r.line for r in rows)
    first_user = rows[3]
    assert first_user.label == "first question"  # the later label entry replaced "start"
    excluded = rows[11]
    assert excluded.message is not None and excluded.message["excludeFromContext"] is True
    assert not excluded.in_context and rows[10].in_context  # pi's convertToLlm drops it
    assert not rows[13].in_context and rows[13].hidden  # custom entries never reach the model
    assert rows[19].usage is not None and rows[19].usage["cacheRead"] == 5000
    assert rows[2].hidden and not rows[3].hidden
    assert rows[13].summary.startswith("extension state [demo-extension]")
    assert "(exit 2)" in excluded.summary and "not sent to the model" in excluded.summary


def test_branches_for_the_switcher() -> None:
    opened = session(PI / "v3_branches.jsonl")
    branches = opened.branches()
    assert len(branches) == 3
    current, *others = branches
    assert current.current and current.leaf == opened.default_leaf
    assert {b.title for b in others} == {"Now write a CHANGELOG.", "Try again"}
    by_title = {b.title: b for b in others}
    # The CHANGELOG branch left from the assistant that called read; "Try again" from the first question.
    changelog_fork = opened.entries[opened.index[by_title["Now write a CHANGELOG."].fork_point or ""]]
    assert changelog_fork["message"]["content"][0]["name"] == "read"
    retry_fork = opened.entries[opened.index[by_title["Try again"].fork_point or ""]]
    assert retry_fork["message"]["content"] == "List the files and read README.md"
    rows = opened.timeline(by_title["Now write a CHANGELOG."].leaf)
    assert [r.kind for r in rows][6:12] == [
        kinds.ASSISTANT,
        kinds.BRANCH_SUMMARY,
        kinds.MODEL_CHANGE,
        kinds.THINKING_LEVEL,
        kinds.SYSTEM,
        kinds.USER,
    ]
    assert rows[7].summary.startswith("branch summary (from ")
    error_rows = [r for r in opened.timeline(by_title["Try again"].leaf) if r.kind == kinds.ERROR]
    assert len(error_rows) == 1 and "overloaded" in error_rows[0].summary


def test_unknown_leaf_is_named() -> None:
    with pytest.raises(BranchNotFound, match="no entry 'nope'"):
        session(PI / "v3_branches.jsonl").timeline("nope")


def test_system_rows_show_section_diffs_like_desktop_rows() -> None:
    opened = session(PI / "v3_compaction.jsonl")
    rows = [r for r in opened.timeline() if r.kind in (kinds.SYSTEM, kinds.COMPACTION)]
    diffs = [opened.system_diffs().get(r.id) for r in rows]
    assert [r.kind for r in rows] == [
        kinds.SYSTEM,
        kinds.SYSTEM,
        kinds.COMPACTION,
        kinds.SYSTEM,
        kinds.COMPACTION,
    ]
    first, update, checkpoint, later, second = diffs
    assert first is not None and [(c.name, c.status) for c in first.changes] == [
        ("preamble", "added"),
        ("agents", "added"),
    ]
    assert first.tools_added == ["read", "bash", "ToolSearch"] and first.sections_after == 2
    assert update is not None and [(c.name, c.status) for c in update.changes] == [("agents", "changed")]
    assert (update.changes[0].before, update.changes[0].after) == (
        "AGENTS.md: use tabs.",
        "AGENTS.md: use spaces.",
    )
    assert checkpoint is not None and checkpoint.label.startswith("compaction checkpoint")
    assert {c.name: c.status for c in checkpoint.changes} == {"preamble": "unchanged", "agents": "unchanged"}
    assert later is not None and {c.name: c.status for c in later.changes} == {
        "agents": "removed",
        "env": "added",
    }
    assert later.tools_removed == ["ToolSearch"] and later.sections_before == 2 and later.sections_after == 2
    assert second is not None and second.problem is None
    assert {c.name: c.status for c in second.changes} == {"preamble": "unchanged", "env": "unchanged"}
    assert opened.timeline()[3].id not in opened.system_diffs()  # a user row changes no state


def test_a_compaction_without_checkpoint_says_so() -> None:
    opened = session(PI / "v1_linear.jsonl")
    compaction = next(r for r in opened.timeline() if r.kind == kinds.COMPACTION)
    diff = opened.system_diffs().get(compaction.id)
    assert diff is not None and diff.problem is not None and "no systemMessage checkpoint" in diff.problem


def test_context_edits_and_compaction_mark_rows_in_and_out_of_context() -> None:
    opened = session(PI / "v3_compaction.jsonl")
    rows = opened.timeline()
    in_context = [r for r in rows if r.in_context]
    # The newest compaction keeps from "Step three": nothing before it reaches the model, not
    # the older compaction nor the system message after it (folded into the new checkpoint).
    assert in_context[0].kind == kinds.USER and text_of(in_context[0].message) == "Step three"
    compactions = [r for r in rows if r.kind == kinds.COMPACTION]
    assert [r.in_context for r in compactions] == [False, True]
    assert not any(r.in_context for r in rows if r.kind == kinds.SYSTEM)
    omitted = next(r for r in rows if r.kind == kinds.CUSTOM_MESSAGE)
    assert not omitted.in_context  # a context_edit with replacement null removed it
    edits = [r for r in rows if r.kind == kinds.CONTEXT_EDIT]
    assert len(edits) == 5 and not any(r.in_context for r in edits)
    assert "omitted from the model's context" in edits[3].summary
    texts = [text_of(m) for m in opened.context().messages if m["role"] != "system"]
    assert "Step 3" in texts and "Step three" not in texts
    assert "Step three done (edited twice)." in texts


def test_a_malformed_line_is_reported_and_the_rest_opens(copy_fixture: Callable[[str], Path]) -> None:
    path = copy_fixture("pi_sessions/v3_branches.jsonl")
    lines = path.read_bytes().split(b"\n")
    lines.insert(6, b'{"type":"message","id":')  # line 7
    lines.insert(9, b"[1, 2]")  # line 10
    path.write_bytes(b"\n".join(lines))
    opened = session(path)
    problems = {(d.line, d.code) for d in opened.diagnostics}
    assert {(7, "not-json"), (10, "not-object")} <= problems
    assert all(str(path) in str(d) for d in opened.diagnostics)
    healthy = session(PI / "v3_branches.jsonl")
    assert opened.context().messages == healthy.context().messages  # nothing else was lost


def test_entries_without_ids_unknown_types_and_duplicates_are_reported(
    copy_fixture: Callable[[str], Path],
) -> None:
    path = copy_fixture("pi_sessions/v3_nested_compaction.jsonl")
    original = session(path)
    last = original.entries[-1]
    extra = [
        {"type": "message", "parentId": last["id"], "message": {"role": "user", "content": "no id"}},
        {"type": "hologram", "id": "holo1", "parentId": last["id"], "timestamp": "2026-10-01T09:00:00.000Z"},
        {**last, "message": {**last["message"], "content": [{"type": "text", "text": "again"}]}},
    ]
    append_lines(path, *extra)
    opened = session(path)
    codes = [d.code for d in opened.diagnostics]
    assert codes == ["bad-entry", "unknown-entry", "duplicate-id"]
    # pi's Map keeps the later entry of a repeated id; the leaf (the last entry) is that one.
    assert opened.context().messages[-1]["content"] == [{"type": "text", "text": "again"}]
    branches = {b.leaf for b in opened.branches()}
    assert "holo1" in branches
    holo = opened.timeline("holo1")[-1]
    assert holo.kind == kinds.OTHER and "unknown entry type 'hologram'" in holo.summary


def test_a_parent_cycle_ends_the_path_instead_of_hanging(copy_fixture: Callable[[str], Path]) -> None:
    path = copy_fixture("pi_sessions/v3_nested_compaction.jsonl")
    entries = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    entries[1]["parentId"] = entries[-1]["id"]  # the root now points at the leaf
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in entries))
    opened = session(path)
    rows = opened.timeline()
    assert len(rows) == len(opened.entries)
    assert opened.context().messages  # still buildable
    assert opened.branches() == []  # every entry has a child: no leaf to offer but the current one


def test_title_is_the_session_name_else_the_first_user_text() -> None:
    assert session(PI / "v3_branches.jsonl").title == "Demo branches"
    assert session(PI / "v1_linear.jsonl").title == "Hello from v1"


@pytest.mark.parametrize("name", PI_FILES)
def test_request_contexts_and_in_context_marks_agree_with_pi_context(name: str) -> None:
    """The incremental request sequence (what-if) equals pi's context rebuilt at every parent,
    and the timeline's in-context marks (made from the entries alone) the context pi builds."""
    opened = session(PI / name)
    for branch in opened.branches():
        sequence = opened.request_contexts(branch.leaf)
        expected = [
            (
                str(entry["id"]),
                opened.context(opened.entries[opened.parents[opened.index[entry["id"]]]]["id"]).messages,
            )
            for entry in (opened.entries[p] for p in opened.path_positions(branch.leaf))
            if entry["type"] == "message" and entry["message"]["role"] == "assistant"
        ]
        assert sequence == expected and sequence
        marked = {row.id for row in opened.timeline(branch.leaf) if row.in_context}
        # (as sets: the context puts the compaction first, the timeline where it happened)
        assert marked == set(opened.context(branch.leaf).sources)


def test_in_context_marks_follow_edits_of_any_entry(copy_fixture: Callable[[str], Path]) -> None:
    """A hand-written edit that omits a system message or a compaction removes it, as pi does."""
    path = copy_fixture("pi_sessions/v3_nested_compaction.jsonl")
    opened = session(path)
    compaction = [e for e in opened.entries if e["type"] == "compaction"][-1]
    edit = {"type": "context_edit", "id": "edit0001", "parentId": opened.entries[-1]["id"]}
    edit |= {"timestamp": "2026-10-01T09:00:00.000Z", "targetId": compaction["id"], "replacement": None}
    append_lines(path, edit)
    edited = session(path)
    assert compaction["id"] not in edited.context().sources
    assert {r.id for r in edited.timeline() if r.in_context} == set(edited.context().sources)
    assert compaction["id"] in set(opened.context().sources)  # it did contribute before the edit
