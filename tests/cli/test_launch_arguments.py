"""`pi-desktop PATH` opens a session in the window (design G8), and `--data-dir` reaches every
command through the environment, set once at start-up."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from desktop.app import parse
from desktop.cli import split_open_paths
from tests.cli.helpers import assert_one_line_error, make_session, run_main, run_process


@pytest.mark.parametrize(
    ("argv", "words", "paths"),
    [
        (["s.jsonl"], [], ["s.jsonl"]),
        (["a.jsonl", "b.jsonl"], [], ["a.jsonl", "b.jsonl"]),
        (["--data-dir", "status", "s.jsonl"], ["--data-dir", "status"], ["s.jsonl"]),
        (["--data-dir=/d", "s.jsonl"], ["--data-dir=/d"], ["s.jsonl"]),
        (["./status"], [], ["./status"]),
        (["status", "s.jsonl"], ["status", "s.jsonl"], []),
        (
            ["--data-dir", "/d", "status", "s.jsonl", "--json"],
            ["--data-dir", "/d", "status", "s.jsonl", "--json"],
            [],
        ),
        (["--", "status"], [], ["status"]),
        (["s.jsonl", "status"], [], ["s.jsonl", "status"]),
        (["--smoke-test"], ["--smoke-test"], []),
    ],
)
def test_paths_and_commands_are_told_apart(argv: list[str], words: list[str], paths: list[str]) -> None:
    assert split_open_paths(argv) == (words, paths)


def test_parse_puts_the_paths_on_the_namespace() -> None:
    args = parse(["--data-dir", "/d", "one.jsonl", "two.jsonl"])
    assert args.open_paths == ["one.jsonl", "two.jsonl"] and args.data_dir == "/d"
    assert getattr(args, "handler", None) is None
    command = parse(["status", "s.jsonl"])
    assert command.command == "status" and command.open_paths == [] and command.session == "s.jsonl"


def test_a_session_path_reaches_the_window(
    tmp_path: Path, fake_launch: dict[str, list[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = make_session(tmp_path)
    status = tmp_path / "status"
    status.write_bytes(path.read_bytes())
    monkeypatch.chdir(tmp_path)
    run = run_main(str(path), "./status")
    assert run.code == 0, run.stderr
    assert [args.open_paths for args in fake_launch["windows"]] == [[str(path), "./status"]]


@pytest.mark.parametrize(
    ("content", "needle"),
    [(None, "no such session file"), (b"", "the file is empty"), (b"PK\x03\x04zip", "line 1 is not JSON")],
)
def test_a_missing_or_unknown_file_is_one_line_before_qt_starts(
    tmp_path: Path, fake_launch: dict[str, list[Any]], content: bytes | None, needle: str
) -> None:
    path = tmp_path / "s.jsonl"
    if content is not None:
        path.write_bytes(content)
    run = run_main(str(path))
    assert_one_line_error(run, "", 2, needle, str(path))
    assert fake_launch["windows"] == []


def test_data_dir_becomes_the_environment_once(
    tmp_path: Path, fake_launch: dict[str, list[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_main("--data-dir", "rel/data").code == 0
    assert os.environ["PI_DESKTOP_DATA_DIR"] == str(tmp_path / "rel" / "data")


def test_headless_commands_read_settings_and_extensions_from_the_data_dir(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    session = make_session(tmp_path)
    (data / "settings.json").write_text(json.dumps({"permissions": {"mode": "sideways"}}))
    run = run_process("--data-dir", str(data), "status", str(session), cwd=tmp_path)
    assert_one_line_error(
        run, "status", 2, "invalid settings", str(data / "settings.json"), "permissions.mode"
    )

    extension = tmp_path / "broken_extension.py"
    extension.write_text("raise RuntimeError('boom')\n")
    (data / "settings.json").write_text(json.dumps({"extensions": [str(extension)]}))
    run = run_process("--data-dir", str(data), "status", str(session), cwd=tmp_path)
    assert run.code == 0, run.stderr
    assert any("broken_extension.py" in line for line in run.stderr.splitlines()), run.stderr
