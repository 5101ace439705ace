"""Codex CLI rollouts: detection, timeline, usage, context, what-if, fork, browser (design X1).

The fixtures (tests/fixtures/codex/, README there) are written by hand from the rollout format
as documented and observed; no private data. The rebuilt context is checked against what the
rollout records the model was given: every call answered by the output recorded for it, each
reply on the model its turn context names, usage from the ``token_count`` after each call.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pytest

from desktop.host.foreign import browse, detect_format
from desktop.session.foreign import CodexSession, fork_to_desktop, kinds, next_request, open_foreign
from desktop.session.whatif import request_sequence
from tests.cli.helpers import run_main
from tests.foreign.support import FIXTURES

CODEX = FIXTURES / "codex"
ROLLOUT = CODEX / "rollout-2026-10-06T10-00-00-0199b1c2-7d4e-7a10-9c3f-2e5d8a6b4f01.jsonl"
OLDER = CODEX / "rollout-2025-06-02T08-00-00-5f0c2b7e-1d3a-4e8b-9a6c-7b2d1e0f3a94.jsonl"


def session(path: Path) -> CodexSession:
    opened = open_foreign(path)
    assert isinstance(opened, CodexSession)
    return opened


def recorded_outputs(path: Path) -> dict[str, str]:
    outputs = {}
    for line in path.read_bytes().splitlines():
        obj = orjson.loads(line)
        item = obj.get("payload") if obj.get("type") == "response_item" else obj
        if isinstance(item, dict) and item.get("type") in ("function_call_output", "custom_tool_call_output"):
            outputs[item["call_id"]] = json.loads(item["output"])["output"]
    return outputs


def test_both_rollout_shapes_are_recognized_by_content() -> None:
    assert detect_format(ROLLOUT).format == "codex"
    assert detect_format(OLDER).format == "codex"
    assert "Codex CLI" in detect_format(ROLLOUT).description


def test_timeline_rows_and_the_malformed_line() -> None:
    opened = session(ROLLOUT)
    assert opened.session_id == "0199b1c2-7d4e-7a10-9c3f-2e5d8a6b4f01"
    assert opened.cwd == "/home/dev/projects/shop" and opened.version == "0.46.0"
    assert [(d.line, d.code, "field 'payload'" in d.message) for d in opened.diagnostics] == [
        (24, "bad-entry", True)
    ]
    rows = opened.timeline()
    assert [(r.id, r.kind) for r in rows] == [
        ("L1", kinds.SESSION_INFO),
        ("L2", kinds.META),  # <environment_context>: injected, not typed
        ("L3", kinds.USER),
        ("L5", kinds.MODEL_CHANGE),
        ("L7", kinds.ASSISTANT),  # reasoning and two parallel calls: one model call
        ("L11", kinds.TOOL),
        ("L12", kinds.TOOL),
        ("L13", kinds.ASSISTANT),
        ("L16", kinds.USER),
        ("L19", kinds.ASSISTANT),
        ("L21", kinds.TOOL),
        ("L22", kinds.ASSISTANT),
        ("L25", kinds.COMPACTION),
        ("L25#s", kinds.COMPACTION_SUMMARY),
        ("L26", kinds.USER),
        ("L27", kinds.MODEL_CHANGE),
        ("L28", kinds.ASSISTANT),
    ]
    assert [r.id for r in rows if r.in_context] == ["L25#s", "L26", "L28"]
    summary = rows[4].summary  # the answer first, the thinking after it (design G7, T12)
    assert summary.startswith("→ shell(") and summary.endswith("(thinking) **Searching for TODO markers**")
    assert rows[10].summary == "apply_patch: Success. Updated the following files: M b.py"
    assert len(opened.branches()) == 1


def test_usage_per_model_call_from_token_counts() -> None:
    records = session(ROLLOUT).usage()
    assert [r.row_id for r in records] == ["L7", "L13", "L19", "L22", "L28"]
    second = records[1].usage
    # input_tokens 5500 holds the 5120 cached ones: 380 fresh.
    assert (second["input"], second["cacheRead"], second["output"], second["totalTokens"]) == (
        380,
        5120,
        30,
        5530,
    )
    assert [r.model for r in records] == ["gpt-5-codex"] * 5


def test_the_context_answers_every_call_with_its_recorded_output() -> None:
    opened = session(ROLLOUT)
    outputs = recorded_outputs(ROLLOUT)
    before = opened.request_contexts()
    assert [len(messages) for _row, messages in before] == [2, 5, 7, 9, 2]
    history = [*before[3][1], opened.timeline()[11].message]  # the last call before the compaction
    paired = 0
    for index, message in enumerate(history):
        if message is None or message["role"] != "assistant":
            continue
        calls = [b["id"] for b in message["content"] if b["type"] == "toolCall"]
        results = history[index + 1 : index + 1 + len(calls)]
        assert [r["toolCallId"] for r in results] == calls
        for result in results:
            assert result["content"] == [{"type": "text", "text": outputs[result["toolCallId"]]}]
            paired += 1
    assert paired == 3
    context = opened.context()
    assert [m["role"] for m in context.messages] == ["user", "user", "assistant"]
    assert not context.system_known and len(context.notes) == 2  # no system prompt; approximate compaction


def test_next_request_and_what_if_run_on_openai_and_elsewhere() -> None:
    opened = session(ROLLOUT)
    body = next_request(opened, "openai/gpt-5.5").body
    assert body["model"] == "gpt-5.5" and body["input"][0]["role"] == "user"
    assert next_request(opened, "anthropic/claude-opus-5-5").body["messages"][0]["role"] == "user"
    sequence = request_sequence(ROLLOUT)
    assert sequence.format == "codex" and len(sequence.requests) == 5 and not sequence.system_known
    assert sequence.output_tokens == [120, 30, 60, 12, 20]


def test_an_older_rollout_reads_the_same_way() -> None:
    opened = session(OLDER)
    assert opened.session_id == "5f0c2b7e-1d3a-4e8b-9a6c-7b2d1e0f3a94"
    assert [m["role"] for m in opened.context().messages] == ["user", "assistant", "toolResult", "assistant"]
    assert opened.context().messages[2]["content"] == [{"type": "text", "text": "print('hi')\n"}]


def test_continue_in_pi_desktop_imports_the_context(tmp_path: Path) -> None:
    from desktop.host.journal import read_session

    opened = session(OLDER)
    path = fork_to_desktop(opened, workspace=tmp_path / "ws", data_dir=str(tmp_path / "data"))
    rows = [r for r in read_session(path).rows if r.get("imported")]
    assert [r["type"] for r in rows] == ["user", "assistant", "toolResult", "assistant"]
    assert any("Codex CLI session" in json.dumps(r) for r in read_session(path).rows)


def test_the_browser_lists_codex_beside_pi_and_claude_code(tmp_path: Path) -> None:
    day = tmp_path / ".codex" / "sessions" / "2026" / "10" / "06"
    day.mkdir(parents=True)
    shutil.copy(ROLLOUT, day / ROLLOUT.name)
    older = tmp_path / ".codex" / "sessions" / "2025" / "06" / "02"
    older.mkdir(parents=True)
    shutil.copy(OLDER, older / OLDER.name)
    found = [w for w in browse(tmp_path, env={}) if w.format == "codex"]
    assert sorted(w.workspace for w in found) == ["(no folder recorded)", "/home/dev/projects/shop"]
    shop = next(w for w in found if w.workspace.startswith("/"))
    assert [s.title for s in shop.sessions] == ["Count the TODOs in this repo"]
    moved = [w for w in browse(tmp_path, env={"CODEX_HOME": str(tmp_path / "none")}) if w.format == "codex"]
    assert moved == []


@pytest.mark.parametrize("command", ["status", "payload", "whatif"])
def test_every_command_reads_a_rollout(command: str) -> None:
    extra = {
        "status": ["--json"],
        "payload": ["--model", "openai/gpt-5.5"],
        "whatif": ["--routes", "openai/gpt-5.5"],
    }
    done = run_main(command, str(ROLLOUT), *extra[command])
    assert done.code == 0, done.stderr
    assert ":24)" in done.stderr and "Traceback" not in done.stderr  # the malformed line, named
    if command == "status":
        assert json.loads(done.stdout)["format"] == "codex"
    elif command == "payload":
        assert json.loads(done.stdout)["model"] == "gpt-5.5"
    else:
        assert "5 request(s)" in done.stdout
