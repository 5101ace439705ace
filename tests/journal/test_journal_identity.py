"""One writer per file identity, not per file name (design T6, T8).

Every other name of an open session (a symlink, a hard link) opens read-only; the holder
record beside the session is never followed or rewritten; a writer whose file was replaced,
moved or grown by someone else refuses to append; and a failed batch's rollback never cuts
bytes this writer did not write.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from desktop.host.journal import JournalWriter, LocalPreparationFailure, NoteRow, UserRow, read_session
from desktop.host.journal import writer as writer_module
from tests.cli.helpers import EMULATOR_MODEL, run_main
from tests.journal.conftest import Spawn, tell

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX links and flock")

HELD = "open for writing in another Pi Desktop window"


def note(text: str) -> NoteRow:
    return NoteRow(level="info", text=text)


@pytest.fixture
def record(session: Path) -> Path:
    """Where the session's holder record goes; nothing is there (its writer has closed)."""
    path = session.with_name("s.jsonl.lock")
    path.unlink(missing_ok=True)
    return path


def aliases(session: Path) -> dict[str, Path]:
    symlink = session.with_name("alias-symlink.jsonl")
    symlink.symlink_to(session.name)
    hardlink = session.with_name("alias-hardlink.jsonl")
    os.link(session, hardlink)
    other = session.parent / "elsewhere"
    other.mkdir()
    absolute = other / "via-absolute.jsonl"
    absolute.symlink_to(session)
    return {"symlink": symlink, "hard link": hardlink, "absolute symlink": absolute}


def test_every_alias_opens_read_only_while_another_process_writes(session: Path, spawn_holder: Spawn) -> None:
    child, state = spawn_holder(session)
    assert state == "writable"
    for kind, alias in aliases(session).items():
        with JournalWriter.open(alias) as second:
            assert second.read_only, kind
            assert HELD in (second.read_only_reason or ""), kind
            with pytest.raises(LocalPreparationFailure) as caught:
                second.append([note(f"through the {kind}")])
            assert caught.value.kind == "read_only"
    assert tell(child, "append").startswith("ACK ")
    assert [row["text"] for row in read_session(session).rows] == ["first", "from holder"]


def test_an_alias_opened_first_holds_the_file_against_the_real_name(session: Path) -> None:
    for alias in aliases(session).values():
        with JournalWriter.open(alias) as first, JournalWriter.open(session) as second:
            assert not first.read_only
            assert second.read_only and "this same Pi Desktop window" in (second.read_only_reason or "")


def test_two_processes_on_two_names_never_both_write(session: Path, spawn_holder: Spawn) -> None:
    names = aliases(session)
    holders = [spawn_holder(path) for path in (names["hard link"], session, names["symlink"])]
    assert [state for _, state in holders] == ["writable", "read-only", "read-only"]
    assert tell(holders[0][0], "append").startswith("ACK ")
    for child, _ in holders[1:]:
        child.stdin.write("append\n")  # type: ignore[union-attr]
        child.stdin.flush()  # type: ignore[union-attr]
        child.wait(timeout=30)  # the read-only holder's append raises: it dies without an ACK
        assert child.returncode != 0
        assert "ACK" not in (child.stdout.read() if child.stdout else "")
    assert [row["text"] for row in read_session(session).rows] == ["first", "from holder"]


def test_prompt_with_a_symlinked_lock_record_fails_clearly_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    run = run_main("prompt", str(path), "--model", EMULATOR_MODEL, "--workspace", str(tmp_path), "hi")
    assert run.code == 0, run.stderr
    precious = tmp_path / "precious.txt"
    precious.write_bytes(b"keep\n")
    record = tmp_path / "s.jsonl.lock"
    record.unlink(missing_ok=True)
    record.symlink_to(precious)
    before = path.read_bytes()
    run = run_main("prompt", str(path), "--workspace", str(tmp_path), "again")
    assert run.code != 0 and "Traceback" not in run.stderr
    assert "symbolic link" in run.err_lines[-1] and str(record) in run.err_lines[-1]
    assert precious.read_bytes() == b"keep\n" and path.read_bytes() == before


def test_creating_a_session_beside_a_symlinked_lock_record_writes_nothing(tmp_path: Path) -> None:
    precious = tmp_path / "precious.txt"
    precious.write_bytes(b"keep\n")
    (tmp_path / "new.jsonl.lock").symlink_to(precious)
    with pytest.raises(LocalPreparationFailure) as caught:
        JournalWriter.create(tmp_path / "new.jsonl", cwd="/p", app_version="t")
    assert caught.value.kind == "lock"
    assert not (tmp_path / "new.jsonl").exists() and precious.read_bytes() == b"keep\n"


@pytest.mark.parametrize(
    ("kind", "why"),
    [
        ("folder", ("not a regular file",)),
        ("fifo", ("not a regular file",)),
        ("dangling symlink", ("not a regular file",)),
        ("symlink to a file", ("symbolic link", "nothing was written")),
    ],
)
def test_a_lock_record_that_is_not_a_regular_file_is_refused_and_left_alone(
    tmp_path: Path, session: Path, record: Path, kind: str, why: tuple[str, ...]
) -> None:
    precious = tmp_path / "precious.txt"
    precious.write_bytes(b"do not overwrite me\n")
    if kind == "folder":
        record.mkdir()
    elif kind == "fifo":
        os.mkfifo(record)
    else:
        record.symlink_to(tmp_path / "nowhere" if kind == "dangling symlink" else precious)
    before = session.read_bytes()
    with JournalWriter.open(session) as writer:
        assert writer.read_only
        reason = writer.read_only_reason or ""
        assert str(record) in reason and all(part in reason for part in why), reason
        with pytest.raises(LocalPreparationFailure) as caught:
            writer.append([note("must not land")])
        assert caught.value.kind == "lock"
    assert session.read_bytes() == before
    assert not (tmp_path / "nowhere").exists()
    assert precious.read_bytes() == b"do not overwrite me\n"
    assert record.is_symlink() == kind.startswith(("dangling", "symlink"))


def test_an_existing_record_hard_linked_to_another_file_is_never_rewritten(
    tmp_path: Path, session: Path, record: Path
) -> None:
    other = tmp_path / "other.txt"
    other.write_bytes(b"unrelated content\n")
    os.link(other, record)
    with JournalWriter.open(session) as writer:
        assert not writer.read_only
        writer.append([note("fine")])
        assert b'"pid"' in record.read_bytes()  # a fresh record took the name
    assert other.read_bytes() == b"unrelated content\n"  # the old file kept its bytes
    assert not record.exists()  # and the record went with the writer


FOREIGN = b'{"type":"note","v":1,"id":"foreign","ts":1,"level":"info","text":"other program"}\n'


def replace(session: Path) -> None:
    """An editor's "save": a new file under the same name."""
    copy = session.with_name("copy.jsonl")
    copy.write_bytes(session.read_bytes())
    os.replace(copy, session)


def append_foreign(session: Path) -> None:
    with session.open("ab") as handle:
        handle.write(FOREIGN)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (replace, "replaced, moved or deleted"),
        (lambda session: os.rename(session, session.with_name("moved.jsonl")), "replaced, moved or deleted"),
        (append_foreign, "another program changed"),
    ],
    ids=["replaced", "moved", "grown"],
)
def test_a_file_changed_under_the_writer_gets_no_rows(
    session: Path, change: Callable[[Path], None], message: str
) -> None:
    with JournalWriter.open(session) as writer:
        change(session)
        files = {path.name: path.read_bytes() for path in session.parent.iterdir()}
        with pytest.raises(LocalPreparationFailure) as caught:
            writer.append([note("must not land")])
        assert caught.value.kind == "changed" and message in caught.value.user_message
        with pytest.raises(LocalPreparationFailure):  # it stays refused until reopened
            writer.append([note("nor this")])
        assert {path.name: path.read_bytes() for path in session.parent.iterdir()} == files


def test_rollback_never_cuts_bytes_another_process_appended(
    session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write fails half-way after another process appended a row (the interleaving the
    kernel allows between two writers on a full disk): nothing that process wrote is cut."""
    foreign = b'{"type":"note","v":1,"id":"foreign","ts":1,"level":"info","text":"acknowledged elsewhere"}\n'

    def half_then_full_disk_alone(fd: int, data: bytes) -> None:
        os.write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    def half_then_full_disk(fd: int, data: bytes) -> None:
        os.write(fd, data[: len(data) // 2])
        subprocess.run([sys.executable, "-c", f"open({str(session)!r}, 'ab').write({foreign!r})"], check=True)
        raise OSError(errno.ENOSPC, "No space left on device")

    with JournalWriter.open(session) as writer:
        start = session.stat().st_size
        monkeypatch.setattr(writer_module, "write_all", half_then_full_disk_alone)
        with pytest.raises(LocalPreparationFailure):
            writer.append([note("half of it landed")])
        assert session.stat().st_size == start  # its own half batch is cut back
        monkeypatch.setattr(writer_module, "write_all", half_then_full_disk)
        with pytest.raises(LocalPreparationFailure) as caught:
            writer.append([UserRow(message={"role": "user", "content": "x" * 400, "timestamp": 1})])
        assert caught.value.kind == "disk_full"
        after = session.read_bytes()
        assert after.endswith(foreign) and len(after) > start + len(foreign)
        monkeypatch.undo()
        with pytest.raises(LocalPreparationFailure) as refused:
            writer.append([note("after the failure")])
        assert refused.value.kind == "changed"
        assert session.read_bytes() == after


def test_opening_for_writing_creates_no_file_until_the_first_row(
    tmp_path: Path, session: Path, record: Path
) -> None:
    """Looking writes nothing (design G12): the holder record beside the session appears with
    the first appended row, not when a window or a command merely opens the session."""
    before = sorted(p.name for p in tmp_path.iterdir())
    with JournalWriter.open(session) as writer:
        assert not writer.read_only
        assert sorted(p.name for p in tmp_path.iterdir()) == before
        writer.append([note("now")])
        assert b'"pid"' in record.read_bytes()
