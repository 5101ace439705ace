"""Bad session files: clear messages naming file and line, nothing acknowledged lost or altered."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from desktop.host.journal import (
    JournalFormatError,
    JournalWriter,
    NoteRow,
    SessionStore,
    UserRow,
    parse_row,
    read_session,
)
from desktop.host.journal.store import describe


def user(text: str) -> UserRow:
    return UserRow(message={"role": "user", "content": text, "timestamp": 1})


def make_session(path: Path, texts: list[str]) -> list[str]:
    with JournalWriter.create(path, cwd="/p", app_version="t") as writer:
        rows = [user(t) for t in texts]
        writer.append(rows)
    return [r.id for r in rows]


def insert_line(path: Path, index: int, raw: bytes) -> None:
    lines = path.read_bytes().split(b"\n")
    lines.insert(index, raw)
    path.write_bytes(b"\n".join(lines))


@pytest.mark.parametrize(
    ("raw", "code", "words"),
    [
        (b'{"type":"user","v":1,"id":"x", BROKEN', "not-json", "is not valid JSON"),
        (b'{"type":"user","v":1,"id":"bad\xff\xfe","ts":1}', "not-json", "not valid UTF-8"),
        (b'{"type":"user","v":"one","id":"u9","ts":1}', "bad-version", "unknown schema version 'one'"),
        (b'{"type":"user","v":0,"id":"u9","ts":1}', "bad-version", "unknown schema version 0"),
        (b"[1, 2, 3]", "not-object", "not an object"),
        (b'{"v":1,"ts":1}', "bad-envelope", "no string 'id'"),
    ],
)
def test_bad_middle_line_is_reported_kept_and_skipped(
    tmp_path: Path, raw: bytes, code: str, words: str
) -> None:
    path = tmp_path / "s.jsonl"
    ids = make_session(path, ["one", "two", "three"])
    insert_line(path, 2, raw)  # after header and first row: line 3
    original = path.read_bytes()

    with JournalWriter.open(path) as writer:
        assert not writer.read_only
        assert [r["id"] for r in writer.rows] == ids
        [diag] = writer.diagnostics
        assert (diag.code, diag.line, diag.severity) == (code, 3, "error")
        assert str(path) in str(diag) and "line 3" in str(diag) and words in str(diag)
        ack = writer.append([user("four")])
    assert path.read_bytes().startswith(original), "a bad line is never rewritten or dropped"
    log = read_session(path)
    assert [r["id"] for r in log.rows] == [*ids, *ack.written]
    assert [d.code for d in log.diagnostics] == [code]
    assert [(s.line, s.raw) for s in log.set_aside] == [(3, raw)]


def test_newer_row_version_is_kept_unchanged_as_unknown(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    ids = make_session(path, ["a"])
    future = {"type": "user", "v": 2, "id": "future-1", "ts": 5, "message": {"shape": "new"}, "z": [1]}
    with path.open("ab") as handle:
        handle.write(orjson.dumps(future) + b"\n")
    log = read_session(path)
    assert [r["id"] for r in log.rows] == [*ids, "future-1"]
    assert log.rows[-1] == future
    [diag] = log.diagnostics
    assert diag.severity == "warning" and diag.line == 3 and "newer than this app" in str(diag)
    model = parse_row(log.rows[1])
    assert type(model).__name__ == "OpaqueRow" and model.to_json() == future


def test_newer_session_format_opens_read_only_with_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    header = {
        "type": "session",
        "v": 2,
        "id": "s",
        "ts": 1,
        "app": "pi-desktop",
        "appVersion": "9",
        "cwd": "/",
    }
    path.write_bytes(orjson.dumps(header) + b"\n")
    before = path.read_bytes()
    with JournalWriter.open(path) as writer:
        assert writer.read_only
        assert "newer version of Pi Desktop" in (writer.read_only_reason or "")
    assert path.read_bytes() == before


def test_50_megabyte_single_line_reads_without_crash(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    ids = make_session(path, ["a", "b"])
    garbage = b"z" * (50 << 20)
    insert_line(path, 2, garbage)
    big = user("q" * (50 << 20))
    with JournalWriter.open(path) as writer:
        [diag] = writer.diagnostics
        assert diag.line == 3 and diag.code == "not-json"
        assert len(str(diag)) < 400, "the message previews the line, it does not print 50 MB"
        assert "52,428,800 bytes" in str(diag)
        ack = writer.append([big])  # a legitimately huge row is fine too
    log = read_session(path)
    assert [r["id"] for r in log.rows] == [*ids, *ack.written]
    assert len(log.rows[-1]["message"]["content"]) == 50 << 20


@pytest.mark.parametrize(
    ("content", "line", "words"),
    [
        (b"", 1, "the file is empty"),
        (b"# My notes\nThis is a markdown file, not a session.\n", 1, "not valid JSON"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", 1, "not valid"),
        (b'{"just": "json"}\n{"more": 1}\n', 1, "not a session header"),
        (b'{"type":"session","v":1,"id":"s"', 1, "no complete line"),
        (b'{"type":"session","v":"x","id":"s","ts":1}\n', 1, "unknown schema version 'x'"),
        (b'{"type":"session","v":1,"id":"s","ts":1}\n', 1, "appVersion"),
    ],
)
def test_files_that_are_not_sessions_raise_a_clear_error(
    tmp_path: Path, content: bytes, line: int, words: str
) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_bytes(content)
    with pytest.raises(JournalFormatError) as caught:
        JournalWriter.open(path)
    assert caught.value.path == path and caught.value.line == line
    assert str(path) in str(caught.value) and f"line {line}" in str(caught.value)
    assert words in str(caught.value)
    assert path.read_bytes() == content, "a file that is not a session is never modified"
    read_session(path)  # plain reading reports, never raises


def test_store_lists_unreadable_files_with_their_problem(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    good = store.create("/proj", app_version="t")
    good.close()
    bad = store.folder_for("/proj") / "2000-01-01T00-00-00_bad.jsonl"
    bad.write_bytes(b"not json at all\n")
    infos = {path.name: describe(path) for path in store.session_files("/proj")}
    assert infos[good.path.name].problem is None and infos[good.path.name].cwd == "/proj"
    problem = infos[bad.name].problem or ""
    assert str(bad) in problem and "line 1" in problem


def test_torn_last_line_is_moved_aside_not_merged(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    ids = make_session(path, ["a"])
    torn = b'{"type":"user","v":1,"id":"half","ts":1,"message":{"role":"us'
    with path.open("ab") as handle:
        handle.write(torn)

    reading = read_session(path)
    assert reading.torn is not None and reading.torn.size == len(torn)
    assert [d.code for d in reading.diagnostics] == ["torn-tail"]
    assert "line 3" in str(reading.diagnostics[0])

    with JournalWriter.open(path, read_only=True) as viewer:  # a viewer never changes the file
        assert viewer.torn_sidecar is None
    assert path.read_bytes().endswith(torn)

    with JournalWriter.open(path) as writer:
        assert writer.torn_sidecar == tmp_path / "s.jsonl.torn-1"
        assert writer.torn_sidecar.read_bytes() == torn
        assert "moved to s.jsonl.torn-1" in str(writer.diagnostics[0])
        note = NoteRow(level="info", text="next")
        writer.append([note])
    log = read_session(path)
    assert log.diagnostics == []
    assert [r["id"] for r in log.rows] == [*ids, note.id]

    with path.open("ab") as handle:  # a second torn tail gets its own sidecar
        handle.write(b'{"type":')
    with JournalWriter.open(path) as writer:
        assert writer.torn_sidecar == tmp_path / "s.jsonl.torn-2"
