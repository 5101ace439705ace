"""A command line that runs one command builds only that command's parser (design D6).

The narrow parser must read the command line exactly as the whole one does; the top-level help
and version, and a command word given as an option's value, still get the whole parser.
"""

from __future__ import annotations

import pytest

from desktop.cli import COMMANDS, build_parser, command_word


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (["status", "s.jsonl"], "status"),
        (["--data-dir", "d", "payload", "s.jsonl"], "payload"),
        (["--data-dir", "status"], None),
        (["--help", "status"], None),
        (["--version"], None),
        (["session.jsonl"], None),
        ([], None),
        (["status", "--help"], "status"),
    ],
)
def test_command_word(words: list[str], expected: str | None) -> None:
    assert command_word(words) == expected


@pytest.mark.parametrize(
    "words",
    [
        ["status", "s.jsonl", "--json", "--mode", "ask"],
        ["--data-dir", "d", "status", "s.jsonl", "--workspace", "w"],
        ["payload", "s.jsonl", "--model", "anthropic/claude-opus-5-5"],
        ["catalog", "status"],
    ],
)
def test_the_narrow_parser_reads_a_command_line_as_the_whole_one(words: list[str]) -> None:
    name = command_word(words)
    assert name in COMMANDS
    narrow = vars(build_parser(name).parse_args(words))
    whole = vars(build_parser().parse_args(words))
    assert narrow.pop("handler") == whole.pop("handler")
    assert narrow == whole


def test_the_narrow_parser_refuses_what_the_whole_one_refuses(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as narrow:
        build_parser("status").parse_args(["status", "s.jsonl", "--no-such-option"])
    narrow_err = capsys.readouterr().err
    with pytest.raises(SystemExit) as whole:
        build_parser().parse_args(["status", "s.jsonl", "--no-such-option"])
    assert narrow.value.code == whole.value.code != 0
    assert narrow_err == capsys.readouterr().err
    assert "--no-such-option" in narrow_err
