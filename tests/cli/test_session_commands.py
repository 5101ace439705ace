"""The headless commands drive the same engine as the window, over the real emulator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.helpers import REPO, run_process


def test_prompt_status_compact_payload_round_trip(tmp_path: Path) -> None:
    model = ["--model", "emulator/anthropic/claude-opus-5-5"]
    first = run_process("prompt", "s.jsonl", *model, "hello world", cwd=tmp_path)
    assert first.code == 0, first.stderr
    assert "Echo: hello world" in first.stdout
    assert "cost $" in first.stderr and "native system sections" in first.stderr
    for i in range(3):
        # Above the 20,000-token retained tail, so `compact` has rows to summarize (design C1).
        text = f"more {i} " + "words " * 2000 + " [[words:3000]]"
        assert run_process("prompt", "s.jsonl", *model, text, cwd=tmp_path).code == 0

    status = run_process("status", "s.jsonl", *model, "--json", cwd=tmp_path)
    info = json.loads(status.stdout)
    assert info["capability"]["delivery"] == "native system sections"
    assert "tool_activation" in info["sections"] and info["pendingUpdate"] is False
    rows_before = info["rows"]

    compact = run_process("compact", "s.jsonl", *model, cwd=tmp_path)
    assert compact.code == 0, compact.stderr
    assert "compacted" in compact.stdout
    rows = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text().splitlines()]
    assert rows[-1]["type"] == "compaction" and len(rows) - 1 == rows_before + 1

    payload = run_process(
        "payload", "s.jsonl", "--model", "anthropic/claude-sonnet-5", "--headers", cwd=tmp_path
    )
    assert payload.code == 0, payload.stderr
    head, body = payload.stdout.split("\n\n", 1)
    assert head.startswith("POST https://api.anthropic.com/v1/messages")
    assert "x-api-key: <redacted>" in head
    sent = json.loads(body)
    assert "compacted into the following summary" in json.dumps(sent["messages"][0])


def test_prompt_reports_a_read_only_session(tmp_path: Path) -> None:
    (tmp_path / "s.jsonl").write_text("not a session\n")
    out = run_process(
        "prompt", "s.jsonl", "--model", "emulator/anthropic/claude-opus-5-5", "hi", cwd=tmp_path
    )
    assert out.code == 2
    assert "s.jsonl" in out.stderr


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ({"model": "nowhere/none", "context": {"messages": []}}, "nowhere"),
        (
            {
                "model": {"id": "x", "api": "carrier-pigeon", "provider": "p", "baseUrl": "u"},
                "context": {"messages": []},
            },
            "model.api",
        ),
        (
            {
                "model": "anthropic/claude-opus-5-5",
                "context": {"messages": [{"role": "robot", "content": "x"}]},
            },
            "messages[0].role",
        ),
        (
            {
                "model": "anthropic/claude-opus-5-5",
                "context": {"messages": [], "tools": [{"name": "t", "parameters": "nope"}]},
            },
            "tools[0]",
        ),
        ({"context": {"messages": []}}, "'model'"),
    ],
)
def test_payload_context_errors_name_the_field(
    tmp_path: Path, document: dict[str, object], field: str
) -> None:
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(document))
    out = run_process("payload", "--context", str(path), cwd=tmp_path)
    assert out.code == 2
    assert field in out.stderr, out.stderr


def test_payload_context_matches_pi_ai_fixture(tmp_path: Path) -> None:
    case = json.loads((REPO / "tests/fixtures/pi_ai/anthropic.json").read_text())[0]
    doc = tmp_path / "doc.json"
    doc.write_text(
        json.dumps({"model": case["model"], "context": case["context"], "options": case["options"]})
    )
    out = run_process("payload", "--context", str(doc), cwd=tmp_path)
    assert out.code == 0, out.stderr
    assert out.stdout.rstrip("\n") == case["bodyText"]
