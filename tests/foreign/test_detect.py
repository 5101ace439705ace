"""Formats are recognized by content, never by name; unknown files say what they look like (X1, D6)."""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import Any

import orjson
import pytest

from desktop import __version__
from desktop.host.foreign import SUPPORTED, detect_format
from desktop.host.foreign.detect import HEAD_BYTES
from desktop.host.journal import JournalWriter
from desktop.session.foreign import ForeignOpenError, open_foreign
from tests.foreign.support import CLAUDE, PI


@pytest.mark.parametrize(
    ("name", "fmt", "version"),
    [
        ("v1_linear.jsonl", "pi", 1),
        ("v2_tree.jsonl", "pi", 2),
        ("v3_branches.jsonl", "pi", 3),
        ("v3_compaction.jsonl", "pi", 3),
    ],
)
def test_pi_files_by_their_header(name: str, fmt: str, version: int, tmp_path: Path) -> None:
    renamed = tmp_path / "notes.txt"  # the name says nothing
    renamed.write_bytes((PI / name).read_bytes())
    detected = detect_format(renamed)
    assert (detected.format, detected.version) == (fmt, version)
    assert str(detected) == f"{renamed}: a pi-coding-agent session, format v{version}"


@pytest.mark.parametrize("name", ["basic.jsonl", "compact.jsonl"])
def test_claude_code_files(name: str, tmp_path: Path) -> None:
    renamed = tmp_path / "session.log"
    renamed.write_bytes((CLAUDE / name).read_bytes())
    assert detect_format(renamed).format == "claude-code"


def test_a_claude_code_file_that_starts_with_a_summary_line(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"type":"summary","summary":"Fix the build","leafUuid":"u-1"}\n')
    assert detect_format(path).format == "claude-code"


def test_desktop_sessions(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    JournalWriter.create(path, cwd=tmp_path, app_version=__version__).close()
    detected = detect_format(path)
    assert detected.format == "desktop" and detected.version == 1
    with pytest.raises(ForeignOpenError, match="a Pi Desktop session; open it as a session"):
        open_foreign(path)


def test_a_newer_pi_format_is_named(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(orjson.dumps({"type": "session", "version": 9, "id": "s", "cwd": "/x"}) + b"\n")
    detected = detect_format(path)
    assert detected.format == "pi" and detected.version == 9
    assert "format v9, newer than this app reads (v1 to v3)" in detected.description
    opened = open_foreign(path)
    assert [d.code for d in opened.diagnostics] == ["newer-format"]


def test_detection_skips_leading_bad_lines_as_pi_does(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"garbage\n" + (PI / "v3_branches.jsonl").read_bytes())
    assert detect_format(path).format == "pi"
    opened = open_foreign(path)
    assert [(d.line, d.code) for d in opened.diagnostics] == [(1, "not-json")]
    assert opened.context().messages


@pytest.mark.parametrize(
    ("content", "looks_like"),
    [
        (b"", "the file is empty"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "it looks like a binary file"),
        (b'{\n  "model": "x",\n  "messages": []\n}\n', "it looks like a JSON document, not JSON Lines"),
        (
            b"# Notes\nsome text\n",
            "it looks like text, not JSON Lines: line 1 is not JSON (starts with '# Notes')",
        ),
        (
            b'{"event":"click","x":1}\n{"event":"key"}\n',
            "it is JSON Lines whose line 1 is an object with no 'type' field (keys: event, x)",
        ),
        (
            b'{"type":"session","cwd":"/x"}\n',
            "it is JSON Lines whose line 1 is an object with type 'session'",
        ),
    ],
)
def test_unknown_files_say_what_they_look_like_and_what_is_supported(
    content: bytes, looks_like: str, tmp_path: Path
) -> None:
    path = tmp_path / "mystery.jsonl"
    path.write_bytes(content)
    detected = detect_format(path)
    assert detected.format == "unknown" and not detected.known
    assert detected.description.startswith(f"{path}: {looks_like}")
    assert detected.description.endswith(f"({SUPPORTED})") and "\n" not in detected.description
    with pytest.raises(ForeignOpenError) as raised:
        open_foreign(path)
    assert str(raised.value) == detected.description


def test_missing_files_and_folders(tmp_path: Path) -> None:
    assert (
        detect_format(tmp_path / "nope.jsonl").description
        == f"{tmp_path / 'nope.jsonl'}: cannot be read (No such file or directory)"
    )
    assert "it is a folder" in detect_format(tmp_path).description


def test_detection_reads_only_the_first_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A header followed by a huge body: the answer comes from the head alone."""
    path = tmp_path / "big.jsonl"
    head = (PI / "v3_branches.jsonl").read_bytes().split(b"\n", 1)[0] + b"\n"
    path.write_bytes(head + b"x" * (64 << 20))  # 64 MiB without a line end after the header
    read: list[int] = []
    real_open = builtins.open

    def counting_open(*args: Any, **kwargs: Any) -> Any:
        handle = real_open(*args, **kwargs)
        real_read = handle.read

        def counted(size: int = -1) -> bytes:
            data: bytes = real_read(size)
            read.append(len(data))
            return data

        handle.read = counted
        return handle

    monkeypatch.setattr(builtins, "open", counting_open)
    assert detect_format(path).format == "pi"
    assert 0 < sum(read) <= HEAD_BYTES < path.stat().st_size


@pytest.mark.parametrize(
    ("first", "fmt"),
    [
        (b'{"type":{"a":1},"v":1,"app":"pi-desktop"}', "unknown"),
        (b'{"type":["session"],"id":"x","version":3}', "unknown"),
        (b'{"type":{"k":"v"},"sessionId":"s","uuid":"u"}', "claude-code"),
    ],
)
def test_a_type_of_any_json_value_is_no_crash(first: bytes, fmt: str, tmp_path: Path) -> None:
    """Status and payload detect every file they are given; a wrong-typed ``type`` is no type."""
    path = tmp_path / "odd.jsonl"
    path.write_bytes(first + b"\n")
    assert detect_format(path).format == fmt
    if fmt == "claude-code":  # an entry by its links, its type reported with the line
        assert any(d.field == "type" and d.line == 1 for d in open_foreign(path).diagnostics)
