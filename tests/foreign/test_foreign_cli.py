"""`status` and `payload` read other agents' sessions through the foreign engine (design X1).

The same engine as ``whatif`` and the window: pi files (v1 to v3, written by pi itself) print
the body pi-ai 1.0.3 sends next, byte for byte; Claude Code files the conversation as Claude
Code sent it. Errors name the format that was detected; nothing is written, locked or created.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from desktop.app import main
from desktop.pi.projection import project
from desktop.session.foreign import next_request, open_foreign, request_options, route_model
from tests.cli.helpers import run_main
from tests.foreign.support import CLAUDE, FIXTURES, PI, pi_expected

EXPECTED = pi_expected()
CASES = [(name, index) for name, data in EXPECTED.items() for index in range(len(data["requests"]))]
FOREIGN = [
    *(PI / name for name in EXPECTED),
    *sorted(CLAUDE.glob("*.jsonl")),
    *sorted((FIXTURES / "pi_quirks").glob("*.jsonl")),
    *sorted((FIXTURES / "codex").glob("*.jsonl")),
]


def run(capfdbinary: pytest.CaptureFixture[bytes], *argv: str) -> tuple[int, bytes, str]:
    code = main(list(argv))
    out, err = capfdbinary.readouterr()
    return code, out, err.decode()


@pytest.mark.parametrize(("name", "index"), CASES, ids=[f"{n}:{i}" for n, i in CASES])
def test_payload_prints_the_body_pi_ai_sends(
    name: str, index: int, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    case = EXPECTED[name]["requests"][index]
    code, out, err = run(capfdbinary, "payload", str(PI / name), "--model", case["route"])
    assert code == 0, err
    assert out == case["bodyText"].encode("utf-8") + b"\n"


def test_payload_headers_and_message(capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    path = PI / "v3_branches.jsonl"
    code, out, err = run(
        capfdbinary,
        "payload",
        str(path),
        "--model",
        "anthropic/claude-opus-5-5",
        "--headers",
        "--message",
        "Go on",
    )
    assert code == 0, err
    head, body = out.split(b"\n\n", 1)
    assert head.startswith(b"POST https://api.anthropic.com/v1/messages")
    assert b"x-api-key: <redacted>" in head or b"authorization: <redacted>" in head
    sent = json.loads(body)
    turns = [m for m in sent["messages"] if m["role"] != "system"]  # opus 5.5 effort markers aside
    assert turns[-1]["role"] == "user" and turns[-1]["content"][0]["text"] == "Go on"
    session = open_foreign(path)
    context = session.context()
    turn: Any = {"role": "user", "content": [{"type": "text", "text": "Go on"}], "timestamp": 0}
    direct = project(
        route_model("anthropic/claude-opus-5-5"), [*context.messages, turn], request_options(session, context)
    )
    assert body == direct.body_bytes + b"\n"


def test_payload_of_a_claude_code_file_is_the_conversation_it_sent(
    capfdbinary: pytest.CaptureFixture[bytes],
) -> None:
    path = CLAUDE / "parallel.jsonl"
    code, out, err = run(capfdbinary, "payload", str(path), "--model", "anthropic/claude-opus-5-5")
    assert code == 0, err
    assert out == next_request(open_foreign(path), "anthropic/claude-opus-5-5").body_bytes + b"\n"
    assert b"No result provided" not in out
    assert "note: Claude Code does not record its system prompt" in err  # said, not invented


@pytest.mark.parametrize("path", FOREIGN, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_status_reads_every_foreign_fixture(path: Path, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    code, out, err = run(capfdbinary, "status", str(path), "--json")
    assert code == 0, err
    info = json.loads(out)
    session = open_foreign(path)
    assert info["format"] == session.format and info["readOnly"] is True
    assert info["messages"] == len(session.context().messages) > 0
    assert info["problems"] == len(session.diagnostics) == err.count("\n")


def test_status_of_a_pi_v3_file_names_its_version(capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    code, out, err = run(capfdbinary, "status", str(PI / "v3_compaction.jsonl"))
    assert code == 0, err
    assert "a pi-coding-agent session, format v3" in out.decode()
    assert "schema version" not in out.decode() + err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (
            ["payload", str(PI / "v3_branches.jsonl"), "--model", "nope/x"],
            "a pi-coding-agent session, format v3: unknown model nope/x",
        ),
        (
            ["status", str(CLAUDE / "parallel.jsonl"), "--branch", "zz"],
            "a Claude Code transcript: no entry 'zz'",
        ),
        (["payload", str(PI / "v1_linear.jsonl"), "--branch", "L99"], "format v1: no entry 'L99'"),
    ],
)
def test_errors_name_the_detected_format(argv: list[str], says: str) -> None:
    done = run_main(*argv)
    assert done.code == 2 and done.stdout == ""
    assert says in done.stderr and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_reading_writes_locks_and_creates_nothing(
    tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    for source in (PI / "v3_branches.jsonl", CLAUDE / "parallel.jsonl"):
        target = folder / source.name
        target.write_bytes(source.read_bytes()[:-1])  # no final newline: pi's loader would add it
        target.chmod(0o444)
    before = {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in folder.iterdir()
    }
    for path in folder.iterdir():
        for argv in (
            ["status", str(path)],
            ["status", str(path), "--json", "--model", "openai/gpt-5.5"],
            ["payload", str(path), "--model", "openai/gpt-5.5", "--headers", "--message", "x"],
        ):
            code, _out, err = run(capfdbinary, *argv)
            assert code == 0, err
    after = {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in folder.iterdir()
    }
    assert after == before and sorted(os.listdir(folder)) == sorted(before)


def test_a_file_manager_opens_a_transcript_whose_first_line_is_damaged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The no-console launcher checks a file before Qt starts: a Claude Code transcript whose
    first line is torn opens (the window reads past it), an unknown file gets the dialog."""
    import types

    from desktop.app import gui_main

    calls: dict[str, list[Any]] = {"windows": [], "refusals": []}
    module = types.ModuleType("desktop.ui.launch")
    module.run_gui = lambda args: calls["windows"].append(args.open_paths) or 0  # type: ignore[attr-defined]
    module.refuse_in_window = lambda text: calls["refusals"].append(text) or 2  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "desktop.ui.launch", module)
    monkeypatch.setattr("desktop.ui.single_instance.hand_over_early", lambda *_a: False)
    damaged = tmp_path / "t.jsonl"
    damaged.write_bytes(b'{"parentUuid":null,"type":"us\n' + (CLAUDE / "parallel.jsonl").read_bytes())
    monkeypatch.setattr(sys, "argv", ["pi-desktop-gui", str(damaged)])
    assert gui_main() == 0
    assert calls == {"windows": [[str(damaged)]], "refusals": []}
    unknown = tmp_path / "notes.jsonl"
    unknown.write_text("just notes\n", encoding="utf-8")
    monkeypatch.setattr(sys, "argv", ["pi-desktop-gui", str(unknown)])
    assert gui_main() == 2
    assert len(calls["refusals"]) == 1 and "not a session" in calls["refusals"][0]


@pytest.mark.parametrize(
    "source",
    [
        PI / "v3_branches.jsonl",
        CLAUDE / "parallel.jsonl",
        FIXTURES / "codex" / "rollout-2025-06-02T08-00-00-5f0c2b7e-1d3a-4e8b-9a6c-7b2d1e0f3a94.jsonl",
    ],
    ids=lambda p: p.parent.name,
)
@pytest.mark.parametrize(
    "argv",
    [["prompt", "--model", "emulator/anthropic/claude-opus-5-5", "hi"], ["compact"]],
    ids=lambda a: a[0],
)
def test_writing_commands_refuse_a_foreign_file_and_leave_no_lock(
    source: Path, argv: list[str], tmp_path: Path, capfdbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = tmp_path / source.name
    path.write_bytes(source.read_bytes())
    code, out, err = run(capfdbinary, argv[0], str(path), *argv[1:])
    assert code == 2 and out == b""
    assert "Pi Desktop only reads other agents' sessions" in err and "Continue in Pi Desktop" in err
    assert sorted(os.listdir(tmp_path)) == [source.name]  # no lock file, no sidecar
    assert path.read_bytes() == source.read_bytes()


def test_status_with_a_route_reports_each_problem_line_once(
    capfdbinary: pytest.CaptureFixture[bytes],
) -> None:
    path = FIXTURES / "pi_quirks" / "v1_glued.jsonl"
    code, out, err = run(capfdbinary, "status", str(path), "--model", "openai/gpt-5.5", "--json")
    assert code == 0, err
    assert err.count("\n") == 1 and "v1_glued.jsonl:5)" in err
    info = json.loads(out)
    assert info["route"] == "openai/gpt-5.5" and info["requestBytes"] > 0
