"""`pi-desktop chat`: one turn per line of standard input, through a real process (design D7, X5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from desktop.emulator import Emulator
from desktop.emulator.faults import Fault
from tests.cli.helpers import EMULATOR_MODEL, run_process


@pytest.fixture
def emulator() -> Any:
    with Emulator() as emu:
        yield emu


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_chat_runs_one_turn_per_line_and_reports_each_as_json(emulator: Emulator, tmp_path: Path) -> None:
    lines = 'first question\n\nsecond [[tool:read {"path":"notes.txt"}]]\nthird\n'
    (tmp_path / "notes.txt").write_text("the notes\n")
    run = run_process(
        "chat",
        "s.jsonl",
        "--model",
        EMULATOR_MODEL,
        "--emulator",
        emulator.url,
        "--jsonl",
        "--yes",
        cwd=tmp_path,
        stdin=lines,
    )
    assert run.code == 0, run.stderr
    got = events(run.stdout)
    assert [e["event"] for e in got] == [
        "session",
        "turn_start",
        "turn_end",
        "turn_start",
        "tool",
        "turn_end",
        "turn_start",
        "turn_end",
        "end",
    ]
    ends = [e for e in got if e["event"] == "turn_end"]
    assert [e["turn"] for e in ends] == [1, 2, 3]
    assert ends[0]["answer"] == "Echo: first question"
    assert ends[1]["requests"] == 2 and "the notes" in ends[1]["answer"]
    assert got[4] == {"event": "tool", "turn": 2, "name": "read", "isError": False}
    # The history was projected before the first line was read (design X31), and said so.
    assert isinstance(got[0]["warmCpuMs"], float) and got[0]["warmCpuMs"] >= 0.0
    for end in ends:
        assert end["stop"] == "stop" and end["error"] is None
        for key in ("wallMs", "cpuMs", "threadCpuMs", "prepareCpuMs"):
            assert isinstance(end[key], float) and end[key] >= 0.0, key
        assert end["usage"]["output"] > 0 and end["usage"]["cost"] > 0
        assert set(end["cache"]) >= {"hitRatio", "misses", "recachedTokens", "causes"}  # design P10
    # Each request the emulator answered is one the events counted; usage matches what it reported.
    assert len(emulator.requests) == sum(e["requests"] for e in ends)
    # Rows appended per turn add up to the file: header + continuation rows + the turns' rows.
    rows = (tmp_path / "s.jsonl").read_text().splitlines()
    starts = [e for e in got if e["event"] == "turn_start"]
    assert len(rows) - 1 == starts[0]["rows"] + sum(e["rowsAppended"] for e in ends)
    assert starts[1]["rows"] == starts[0]["rows"] + ends[0]["rowsAppended"]
    assert got[-1] == {"event": "end", "turns": 3, "failed": 0}


def test_chat_prints_the_answers_and_keeps_going_after_a_failed_turn(
    emulator: Emulator, tmp_path: Path
) -> None:
    model = ["--model", EMULATOR_MODEL, "--emulator", emulator.url]
    assert run_process("chat", "s.jsonl", *model, cwd=tmp_path, stdin="warm up\n").code == 0
    emulator.inject(Fault("server_error", status=400), times=1)
    run = run_process("chat", "s.jsonl", *model, cwd=tmp_path, stdin="this one fails\nthis one works\n")
    assert run.code == 1, run.stderr
    assert "Echo: this one works" in run.stdout
    failures = [
        line for line in run.stderr.splitlines() if line.startswith("pi-desktop chat: turn 1 failed:")
    ]
    assert len(failures) == 1 and "Traceback" not in run.stderr


def test_chat_on_a_file_that_is_not_a_session_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "s.jsonl").write_text("not a session\n")
    run = run_process("chat", "s.jsonl", "--model", EMULATOR_MODEL, cwd=tmp_path, stdin="hi\n")
    assert run.code == 2 and len(run.stderr.splitlines()) == 1, run.stderr
    assert "s.jsonl:1" in run.stderr
