"""Write-ahead (design T3): a write the OS refuses is a LocalPreparationFailure; the retry with the same ids lands once.

Root ignores file permissions, so the failures here are ones the kernel enforces for everybody:
RLIMIT_FSIZE (EFBIG, in a child process), a full tmpfs (ENOSPC; needs mount rights, skipped
otherwise) and a parent path that is a file (ENOTDIR).
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from desktop.host.journal import (
    JournalWriter,
    LocalPreparationFailure,
    NoteRow,
    UserRow,
    read_session,
)
from tests.journal.conftest import start_child


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_file_size_limit_failure_then_retry_lands_once(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    child = start_child("fsize", session, stdout=subprocess.PIPE)
    out, _ = child.communicate(timeout=60)
    assert child.returncode == 0
    report = orjson.loads(out)
    ids = report["ids"]
    big_alone, small_and_big = report["failures"]
    for failure in (big_alone, small_and_big):
        assert failure is not None, "the OS was expected to refuse the write"
        assert failure["kind"] == "disk_full" and failure["errno"] == errno.EFBIG
        assert failure["size_after"] == report["size_before"], "a failed batch leaves no bytes behind"
        assert "Nothing was sent to the model" in failure["message"]
        assert str(session) in failure["message"]
    assert big_alone["row_ids"] == [ids["big"]]
    assert small_and_big["row_ids"] == [ids["small"], ids["big"]]
    assert report["held_after_failure"] == [False, False]
    assert report["retry_written"] == [ids["small"], ids["big"]]
    assert report["again_written"] == []
    assert report["reread_ids"] == [ids["first"], ids["small"], ids["big"]]
    assert report["diagnostics"] == []


@pytest.fixture
def tiny_tmpfs(tmp_path: Path) -> Iterator[Path]:
    mount_point = tmp_path / "tiny"
    mount_point.mkdir()
    if not sys.platform.startswith("linux"):
        pytest.skip("tmpfs is Linux")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount_point)],
        capture_output=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


def fill(directory: Path) -> Path:
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return filler


def test_full_disk_failure_then_retry_lands_once(tiny_tmpfs: Path) -> None:
    session = tiny_tmpfs / "s.jsonl"
    with JournalWriter.create(session, cwd="/p", app_version="t") as writer:
        first = UserRow(message={"role": "user", "content": "hello", "timestamp": 1})
        writer.append([first])
        size = session.stat().st_size
        filler = fill(tiny_tmpfs)

        turn = [
            UserRow(message={"role": "user", "content": "x" * 20_000, "timestamp": 2}),
            NoteRow(level="info", text="second row of the turn"),
        ]
        with pytest.raises(LocalPreparationFailure) as caught:
            writer.append(turn)
        failure = caught.value
        assert failure.kind == "disk_full"
        assert isinstance(failure.cause, OSError) and failure.cause.errno == errno.ENOSPC
        assert "disk" in failure.user_message and "Nothing was sent" in failure.user_message
        assert failure.row_ids == tuple(r.id for r in turn)
        assert session.stat().st_size == size
        assert not {r.id for r in turn} & {row["id"] for row in writer.rows}

        filler.unlink()
        ack = writer.append(turn)
        assert ack.written == tuple(r.id for r in turn)
        assert writer.append(turn).written == ()
    log = read_session(session)
    assert log.diagnostics == []
    assert Counter(r["id"] for r in log.rows) == Counter([first.id, *(r.id for r in turn)])


def test_session_in_a_path_that_cannot_exist_fails_as_local_preparation(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where a folder should be")
    with pytest.raises(LocalPreparationFailure) as caught:
        JournalWriter.create(blocker / "s.jsonl", cwd="/p", app_version="t")
    assert caught.value.kind == "io"
    assert isinstance(caught.value.cause, OSError)
    assert str(blocker / "s.jsonl") in caught.value.user_message


def test_closed_writer_refuses_with_a_local_failure(tmp_path: Path) -> None:
    writer = JournalWriter.create(tmp_path / "s.jsonl", cwd="/p", app_version="t")
    writer.close()
    with pytest.raises(LocalPreparationFailure) as caught:
        writer.append([NoteRow(level="info", text="late")])
    assert caught.value.kind == "closed"


def test_invalid_row_is_refused_before_any_byte_is_written(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with JournalWriter.create(path, cwd="/p", app_version="t") as writer:
        size = path.stat().st_size
        good = NoteRow(level="info", text="fine")
        for bad in (
            {"type": "user", "v": 1, "id": "u1", "ts": 1, "message": {"role": "assistant"}},
            {"type": "mystery", "v": 1, "id": "m1", "ts": 1},
            {"type": "note", "v": 2, "id": "n1", "ts": 1, "level": "info", "text": "future"},
            {"type": "note", "v": 1, "ts": 1, "level": "info", "text": "no id"},
        ):
            with pytest.raises(LocalPreparationFailure) as caught:
                writer.append([good, bad])
            assert caught.value.kind == "invalid_row"
            assert path.stat().st_size == size
            assert good.id not in {row["id"] for row in writer.rows}
