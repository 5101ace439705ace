"""Claude Code transcripts: rows, reminders, compaction, sidechains, usage, context (design X1).

The fixtures (tests/fixtures/claude_code/) are written by hand from the format as documented
and observed in public readers of these files; see the README there. No private data.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import orjson

from desktop.pi.projection import RequestOptions, project
from desktop.session.foreign import kinds, next_request, route_model
from desktop.session.foreign.claude import user_parts, user_shape
from tests.foreign.support import CLAUDE, append_lines
from tests.foreign.support import claude_session as session

BASIC = CLAUDE / "basic.jsonl"
COMPACT = CLAUDE / "compact.jsonl"
M = "a0000000-0000-4000-8000-0000000000"
SUB = "b0000000-0000-4000-8000-0000000000"


def test_current_branch_rows_with_reminders_meta_notes_and_merged_replies() -> None:
    opened = session(BASIC)
    assert opened.session_id == "7f3c2a10-5b4e-4c2d-9a61-0d2e8f4b1c33"
    assert opened.cwd == "/home/dev/projects/demo" and opened.version == "2.0.14"
    assert opened.default_leaf == M + "21"  # the last conversation entry of the main chain
    rows = opened.timeline()
    assert [(r.id.removeprefix(M), r.kind) for r in rows] == [
        ("01", kinds.USER),
        ("01#r0", kinds.REMINDER),
        ("02", kinds.ASSISTANT),  # three streamed entries of msg_01A, one row
        ("05", kinds.OTHER),  # a progress entry in the chain
        ("06", kinds.TOOL),
        ("07", kinds.ASSISTANT),
        ("08", kinds.TOOL),
        ("08#u", kinds.REMINDER),  # a tool result followed by a reminder-only text block
        ("09", kinds.ASSISTANT),
        ("10", kinds.NOTE),
        ("11", kinds.META),
        ("12", kinds.USER),
        ("14", kinds.ASSISTANT),
        ("15", kinds.TOOL),
        ("16", kinds.ASSISTANT),
        ("20", kinds.USER),
        ("21", kinds.ASSISTANT),
        ("summary@25", kinds.SESSION_INFO),  # the summary line naming this leaf
    ]
    by_id = {r.id.removeprefix(M): r for r in rows}
    assert by_id["01"].summary == "List the files and read README.md"  # the reminder cut out
    assert by_id["01#r0"].summary == "As you answer, use the project's CLAUDE.md: Use tabs."
    assert by_id["01#r0"].hidden and by_id["11"].hidden and not by_id["01"].hidden
    merged = by_id["02"].message
    assert merged is not None
    assert [b["type"] for b in merged["content"]] == ["thinking", "text", "toolCall"]
    assert merged["stopReason"] == "toolUse" and merged["content"][0]["thinkingSignature"] == "c2lnLWE="
    assert by_id["06"].summary == "Bash: README.md src"  # the tool name from the matching tool_use
    assert by_id["15"].summary == "Task: Test written."
    assert by_id["10"].summary == "informational: Hook PostToolUse ran" and not by_id["10"].in_context


def test_usage_per_model_call_counts_a_streamed_reply_once() -> None:
    records = session(BASIC).usage()
    assert [r.row_id.removeprefix(M) for r in records] == ["02", "07", "09", "14", "16", "21", SUB + "02"]
    assert [r.kind for r in records] == ["message"] * 6 + ["sub-agent"]  # the Task's sub-agent counts too
    first = records[0]
    # The last streamed entry's figures (output 95), not the 12 of the first, and not summed.
    assert dict(first.usage) | {"cost": None} == {
        "input": 3,
        "output": 95,
        "cacheRead": 9000,
        "cacheWrite": 1500,
        "cacheWrite1h": 500,
        "totalTokens": 3 + 95 + 9000 + 1500,
        "cost": None,
    }
    assert first.raw is not None and first.raw["service_tier"] == "standard"
    assert first.model == "claude-sonnet-4-5-20250929"
    assert sum(r.usage["output"] for r in records) == 95 + 60 + 20 + 40 + 12 + 6 + 15


def test_the_context_is_what_the_model_was_given() -> None:
    context = session(BASIC).context()
    assert not context.system_known and "system prompt" in context.notes[0]
    roles = [m["role"] for m in context.messages]
    assert roles == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "toolResult",
        "user",
        "assistant",
        "user",
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "user",
        "assistant",
    ]
    # The synthetic API-error reply is not in it; the retry that answered is.
    assert all("API Error" not in orjson.dumps(m).decode() for m in context.messages)
    image = context.messages[8]["content"][1]
    assert image == {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    call = context.messages[1]["content"][2]
    assert call == {
        "type": "toolCall",
        "id": "toolu_01",
        "name": "Bash",
        "arguments": {"command": "ls", "description": "List files"},
    }
    assert context.messages[2] == {
        "role": "toolResult",
        "toolCallId": "toolu_01",
        "toolName": "Bash",
        "content": [{"type": "text", "text": "README.md\nsrc"}],
        "isError": False,
        "timestamp": context.messages[2]["timestamp"],
    }
    assert context.model == ("anthropic", "claude-sonnet-4-5-20250929")


def test_branches_include_the_rewind_the_failed_call_and_the_sub_agent() -> None:
    branches = session(BASIC).branches()
    assert [
        (b.leaf.removeprefix(M).removeprefix("b0000000-0000-4000-8000-0000000000"), b.current, b.sidechain)
        for b in branches
    ] == [
        ("21", True, False),
        ("19", False, False),
        ("13", False, False),
        ("02", False, True),
    ]
    assert branches[0].title == "Demo: list files, read README, add a test"  # the summary naming this leaf
    assert branches[1].title == "Now add two tests" and branches[1].fork_point == M + "11"
    rewind = session(BASIC).timeline(branches[1].leaf)
    assert rewind[-1].kind == kinds.ATTACHMENT and rewind[-1].summary == "attachment: hook_success"
    failed = session(BASIC).timeline(branches[2].leaf)[-1]
    assert failed.kind == kinds.ERROR and not failed.in_context and "529" in failed.summary
    side = session(BASIC).timeline(branches[3].leaf)
    assert [r.kind for r in side] == [kinds.USER, kinds.ASSISTANT] and all(r.sidechain for r in side)


def test_compaction_boundary_and_summary_rows_and_a_context_that_restarts() -> None:
    opened = session(COMPACT)
    rows = opened.timeline()
    assert [r.kind for r in rows] == [
        kinds.USER,
        kinds.ASSISTANT,
        kinds.USER,
        kinds.ASSISTANT,
        kinds.COMPACTION,
        kinds.COMPACTION_SUMMARY,
        kinds.USER,
        kinds.ASSISTANT,
    ]
    assert rows[4].summary == "compacted 2,100 tokens (manual)"
    assert [r.in_context for r in rows] == [False] * 5 + [True] * 3
    context = opened.context()
    assert [m["content"] for m in context.messages[:2]] == [
        "This session is being continued from a previous conversation that ran out of context. "
        "Summary: the user asked for a plan; the plan was given.",
        "Go on",
    ]
    redacted = rows[3].message
    assert redacted is not None and redacted["content"][0] == {
        "type": "thinking",
        "thinking": "",
        "thinkingSignature": "ZW5jcnlwdGVk",
        "redacted": True,
    }
    # Every model call's request: before the boundary the whole chain, after it the summary on.
    sizes = [len(messages) for _row, messages in opened.request_contexts()]
    assert sizes == [1, 3, 2]


def test_next_request_projects_the_context_on_any_route() -> None:
    opened = session(BASIC)
    request = next_request(opened, "anthropic/claude-opus-5-5")
    body = request.body
    assert "system" not in body  # Claude Code's prompt is not in the file; none is invented
    turns = [m["role"] for m in body["messages"] if m["role"] != "system"]  # opus 5.5 effort markers aside
    assert turns[0] == "user" and turns[-1] == "assistant" and len(turns) == 14
    assert body["model"] == "claude-opus-5-5"
    direct = project(  # the same projection the dispatch uses, fed the same context
        route_model("anthropic/claude-opus-5-5"),
        opened.context().messages,
        RequestOptions(session_id=opened.session_id, api_key="<api-key>"),
    )
    assert direct.body_bytes == request.body_bytes
    flash = next_request(opened, "deepseek/deepseek-flash").body
    assert flash["messages"][0]["role"] == "user"


def test_entries_without_message_are_reported_and_the_rest_opens(copy_fixture: Callable[[str], Path]) -> None:
    path = copy_fixture("claude_code/compact.jsonl")
    lines = path.read_bytes().splitlines()
    broken = orjson.loads(lines[6])
    del broken["message"]
    lines[6] = orjson.dumps(broken)
    lines.insert(2, b"not json at all")
    path.write_bytes(b"\n".join(lines) + b"\n")
    opened = session(path)
    assert [(d.line, d.code) for d in opened.diagnostics] == [(3, "not-json"), (8, "bad-entry")]
    assert [m["content"] for m in opened.context().messages if m["role"] == "assistant"] == [
        [{"type": "text", "text": "Continuing."}]
    ]


def test_the_cheap_plan_agrees_with_the_conversion_on_every_entry() -> None:
    """The timeline plans rows from ``user_shape``; the messages come from ``user_parts``."""
    for path in (BASIC, COMPACT):
        for entry in session(path).entries:
            if entry["type"] != "user":
                continue
            shape, parts = user_shape(entry), user_parts(entry, {})
            assert (shape.results, shape.has_message, shape.reminders, shape.only_reminders) == (
                len(parts.results),
                parts.message is not None,
                parts.reminders,
                parts.only_reminders,
            )


def test_dangling_bookkeeping_entries_make_no_branches(copy_fixture: Callable[[str], Path]) -> None:
    """A progress entry hanging off the middle of the chain (or off a leaf) is not a branch end."""
    path = copy_fixture("claude_code/basic.jsonl")
    before = [(b.leaf, b.length) for b in session(path).branches()]
    extra = [
        {
            "type": "progress",
            "uuid": "p-mid",
            "parentUuid": M + "14",
            "sessionId": "s",
            "timestamp": "2026-10-02T10:00:23.500Z",
        },
        {
            "type": "progress",
            "uuid": "p-end",
            "parentUuid": M + "21",
            "sessionId": "s",
            "timestamp": "2026-10-02T10:00:42.000Z",
        },
    ]
    append_lines(path, *extra)
    opened = session(path)
    assert [(b.leaf, b.length) for b in opened.branches()] == before
    assert before[0] == (M + "21", 17)  # the current branch: its entries, root to leaf
    assert opened.default_leaf == M + "21"
