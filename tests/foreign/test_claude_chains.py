"""Claude Code chains rebuilt as Claude Code sent them (design X1).

The links a transcript records are not always the chain the model was sent: parallel tool
results each name their own tool_use entry as parent, a compaction can name a logical parent
the file does not hold, some writers leave every ``parentUuid`` null, and older files keep
sub-agent sidechains in the main file. The fixtures (tests/fixtures/claude_code/, see the
README there) are written by hand in the observed format; the checks compare the rebuilt
context with what the file records the model received (every tool_use answered by the
result recorded for it, in the reply it was made in).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from desktop.session.foreign import kinds, next_request, open_foreign
from desktop.session.whatif import request_sequence
from tests.cli.helpers import run_main
from tests.foreign.support import CLAUDE, FIXTURES
from tests.foreign.support import claude_session as session

PARALLEL = CLAUDE / "parallel.jsonl"
COMPACT_ORPHAN = CLAUDE / "compact_orphan.jsonl"
NULL_PARENTS = CLAUDE / "null_parents.jsonl"
LEGACY = CLAUDE / "legacy.jsonl"
P = "e1000000-0000-4000-8000-0000000000"


def recorded(path: Path) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """What the file says the model was sent: each reply's tool_use ids (by message.id, in the
    order written) and each tool_use id's recorded result content."""
    calls: dict[str, list[str]] = {}
    results: dict[str, Any] = {}
    for line in path.read_bytes().splitlines():
        entry = orjson.loads(line)
        message = entry.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if block.get("type") == "tool_use":
                calls.setdefault(message["id"], []).append(block["id"])
            elif block.get("type") == "tool_result":
                results[block["tool_use_id"]] = block["content"]
    return calls, results


def paired(path: Path, leaf: str | None = None) -> int:
    """Check every tool call of the context against the file; return how many results paired."""
    opened = session(path)
    calls, results = recorded(path)
    messages = opened.context(leaf).messages
    count = 0
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        ids = [b["id"] for b in message["content"] if b["type"] == "toolCall"]
        if message.get("responseId") in calls:
            assert ids == calls[message["responseId"]]  # the reply as one message, all its calls
        following = []
        for after in messages[index + 1 :]:
            if after["role"] != "toolResult":
                break
            following.append(after)
        assert sorted(r["toolCallId"] for r in following) == sorted(ids)
        for result in following:
            recorded_content = results[result["toolCallId"]]
            text = recorded_content if isinstance(recorded_content, str) else recorded_content[0]["text"]
            assert result["content"] == [{"type": "text", "text": text}]
            count += 1
    return count


def test_parallel_tool_results_join_their_turn_and_make_no_branch() -> None:
    opened = session(PARALLEL)
    branches = opened.branches()
    assert [(b.leaf, b.current) for b in branches] == [(P + "16", True)]
    rows = opened.timeline()
    assert [(r.id.removeprefix(P), r.kind) for r in rows] == [
        ("01", kinds.USER),
        ("02", kinds.ASSISTANT),  # four streamed entries of msg_P1: one reply, three calls
        ("06", kinds.TOOL),  # off the chain (its parent is its own tool_use entry), joined
        ("07", kinds.TOOL),
        ("08", kinds.TOOL),
        ("09", kinds.ATTACHMENT),  # an attachment left beside the chain, shown on it
        ("10", kinds.ASSISTANT),
        ("11", kinds.USER),
        ("12", kinds.ASSISTANT),  # msg_P3; its second tool_use entry sits off the chain
        ("14", kinds.TOOL),
        ("15", kinds.TOOL),
        ("16", kinds.ASSISTANT),
    ]
    assert all(r.in_context for r in rows if r.kind != kinds.ATTACHMENT)
    assert paired(PARALLEL) == 5
    assert [r.row_id.removeprefix(P) for r in opened.usage()] == ["02", "10", "12", "16"]


def test_the_next_request_carries_the_real_results_not_placeholders() -> None:
    body = next_request(session(PARALLEL), "anthropic/claude-opus-5-5").body
    text = json.dumps(body)
    assert "No result provided" not in text and '"is_error": true' not in text
    turns = [m for m in body["messages"] if m["role"] in ("user", "assistant")]
    calls = [b["id"] for b in turns[1]["content"] if b["type"] == "tool_use"]
    answered = [b["tool_use_id"] for b in turns[2]["content"] if b["type"] == "tool_result"]
    assert calls == answered == ["toolu_p1", "toolu_p2", "toolu_p3"]
    second = [b["tool_use_id"] for b in turns[6]["content"] if b["type"] == "tool_result"]
    assert sorted(second) == ["toolu_p4", "toolu_p5"]


def test_every_model_call_of_a_parallel_turn_is_replayed_with_its_results() -> None:
    sizes = [len(messages) for _row, messages in session(PARALLEL).request_contexts()]
    # user | + reply, 3 results | + reply, user | + reply, 2 results
    assert sizes == [1, 5, 7, 10]


def test_a_compaction_whose_logical_parent_is_missing_continues_the_chain() -> None:
    opened = session(COMPACT_ORPHAN)
    assert len(opened.branches()) == 1
    rows = opened.timeline()
    assert [r.kind for r in rows] == [
        kinds.USER,
        kinds.ASSISTANT,
        kinds.COMPACTION,
        kinds.COMPACTION_SUMMARY,
        kinds.USER,
        kinds.ASSISTANT,
    ]
    assert [r.in_context for r in rows] == [False, False, False, True, True, True]
    assert [len(messages) for _row, messages in opened.request_contexts()] == [1, 2]


def test_a_file_of_null_parents_reads_in_file_order() -> None:
    opened = session(NULL_PARENTS)
    assert len(opened.branches()) == 1
    assert [m["role"] for m in opened.context().messages] == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "user",
        "assistant",
    ]
    assert paired(NULL_PARENTS) == 1


def test_an_older_file_shows_its_summary_and_counts_its_sub_agent() -> None:
    opened = session(LEGACY)
    rows = opened.timeline()
    assert rows[0].kind == kinds.SESSION_INFO and "Shop: price rounding fix" in rows[0].summary
    assert opened.title == "Shop: price rounding fix"
    branches = opened.branches()
    assert [(b.current, b.sidechain) for b in branches] == [(True, False), (False, True)]
    lane = opened.lanes()
    assert lane == [branches[1].leaf]
    side = opened.timeline(lane[0])
    assert [r.kind for r in side] == [kinds.USER, kinds.ASSISTANT, kinds.TOOL, kinds.TOOL, kinds.ASSISTANT]
    assert paired(LEGACY, lane[0]) == 2 and paired(LEGACY) == 2
    usage = opened.usage()
    assert [r.kind for r in usage] == ["message"] * 3 + ["sub-agent"] * 2
    sequence = request_sequence(LEGACY)
    assert len(sequence.requests) == 5  # three on the main chain, two by the sub-agent
    assert sequence.timestamps == sorted(t for t in sequence.timestamps if t is not None)


@pytest.mark.parametrize("path", [PARALLEL, COMPACT_ORPHAN, NULL_PARENTS, LEGACY], ids=lambda p: p.name)
def test_whatif_runs_on_each_through_the_command(path: Path) -> None:
    done = run_main("whatif", str(path), "--routes", "anthropic/claude-opus-5-5", "--json")
    assert done.code == 0, done.stderr
    data = json.loads(done.stdout)
    expected = {PARALLEL: 4, COMPACT_ORPHAN: 2, NULL_PARENTS: 3, LEGACY: 5}[path]
    assert data["requests"] == expected


def test_every_real_format_fixture_opens_with_every_call_paired() -> None:
    """Across the formats' fixtures: each opens, and every tool call in every branch's context
    is followed by its result (none left for pi-ai to fill with "No result provided")."""
    folders = ("claude_code", "pi_sessions", "pi_quirks", "codex")
    files = sorted(path for folder in folders for path in (FIXTURES / folder).glob("*.jsonl"))
    calls: set[tuple[str, str]] = set()
    unpaired: list[tuple[str, str]] = []
    for path in files:
        opened = open_foreign(path)
        for branch in opened.branches():
            messages = opened.context(branch.leaf).messages
            for index, message in enumerate(messages):
                if message["role"] != "assistant":
                    continue
                answered = set()
                for after in messages[index + 1 :]:
                    if after["role"] != "toolResult":
                        break
                    answered.add(after["toolCallId"])
                for block in message["content"]:
                    if block["type"] == "toolCall" and (path.name, block["id"]) not in calls:
                        calls.add((path.name, block["id"]))
                        if block["id"] not in answered:
                            unpaired.append((path.name, block["id"]))
        assert b"No result provided" not in next_request(opened, "anthropic/claude-opus-5-5").body_bytes
    assert len(files) == 15 and len(calls) == 18 and unpaired == []


SUBAGENTS = CLAUDE / "subagents"
MAIN = SUBAGENTS / "9e4b2f10-6a7c-4d3e-8b1f-0c5a7d2e9f36.jsonl"


def test_a_sub_agent_written_to_its_own_file_is_a_lane_of_its_session(tmp_path: Path) -> None:
    """Claude Code 2.x writes a Task's sub-agent to <session>/subagents/agent-<id>.jsonl."""
    import hashlib
    import shutil

    project = tmp_path / ".claude" / "projects" / "-home-dev-projects-shop"
    shutil.copytree(SUBAGENTS, project)
    main = project / MAIN.name
    listing = sorted(str(p.relative_to(project)) for p in project.rglob("*"))
    digests = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in project.rglob("*.jsonl")}
    opened = session(main)
    branches = opened.branches()
    assert [(b.current, b.sidechain) for b in branches] == [(True, False), (False, True)]
    lane = opened.timeline(branches[1].leaf)
    assert [r.kind for r in lane] == [kinds.USER, kinds.ASSISTANT, kinds.TOOL, kinds.ASSISTANT]
    assert opened.lanes() == [branches[1].leaf]
    assert [r.kind for r in opened.usage()] == ["message", "message", "sub-agent", "sub-agent"]
    assert len(request_sequence(main).requests) == 4
    assert paired(main) == 1
    side = opened.context(branches[1].leaf).messages
    assert [m["role"] for m in side] == ["user", "assistant", "toolResult", "assistant"]
    assert side[2]["toolCallId"] == "toolu_g1" and side[2]["toolName"] == "Grep"
    from desktop.host.foreign import browse

    listed = [s.path.name for w in browse(tmp_path, env={}) for s in w.sessions]
    assert listed == [MAIN.name]  # the agent file opens with its session, not as one of its own
    assert sorted(str(p.relative_to(project)) for p in project.rglob("*")) == listing
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in project.rglob("*.jsonl")} == digests


def test_continue_in_pi_desktop_carries_every_parallel_result(tmp_path: Path) -> None:
    from desktop.host.journal import read_session
    from desktop.session.foreign import fork_to_desktop

    path = fork_to_desktop(session(PARALLEL), workspace=tmp_path / "ws", data_dir=str(tmp_path / "data"))
    imported = [r for r in read_session(path).rows if r.get("imported")]
    results = [r["message"]["toolCallId"] for r in imported if r["type"] == "toolResult"]
    assert results == ["toolu_p1", "toolu_p2", "toolu_p3", "toolu_p5", "toolu_p4"]
    assert len(imported) == 11


@pytest.mark.parametrize("parent", ["itself", "its child"])
def test_a_sidechain_whose_parents_loop_opens_without_hanging(tmp_path: Path, parent: str) -> None:
    """Hand-written parents may form a loop; walking them must stop (found by the structure
    fuzz: before, the sub-agent lanes of such a file looped forever and froze the window)."""
    base = {"sessionId": "s", "version": "2.0.14", "cwd": "/w", "timestamp": "2026-10-02T10:00:00.000Z"}
    lines = [
        {
            **base,
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "isSidechain": False,
            "message": {"role": "user", "content": "hi"},
        },
        {
            **base,
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "isSidechain": False,
            "message": {
                "id": "m1",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "hello"}],
                "usage": {"input_tokens": 10, "output_tokens": 2},
            },
        },
        {
            **base,
            "type": "system",
            "uuid": "s1",
            "parentUuid": "s1" if parent == "itself" else "s2",
            "isSidechain": True,
            "content": "loop",
        },
        {**base, "type": "system", "uuid": "s2", "parentUuid": "s1", "isSidechain": True, "content": "loop"},
        {
            **base,
            "type": "user",
            "uuid": "s3",
            "parentUuid": "s2",
            "isSidechain": True,
            "message": {"role": "user", "content": "sub-agent"},
        },
    ]
    path = tmp_path / "loop.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    script = (
        "import sys; from desktop.session.foreign import open_foreign;"
        "s = open_foreign(sys.argv[1]); print(len(s.usage()), len(s.timeline()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "1"  # the one reply of the main chain
