"""One writer per session (design T6): a second process gets a read-only view and is told why."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from desktop.host.journal import JournalWriter, LocalPreparationFailure, NoteRow, read_session
from tests.journal.conftest import Spawn, tell


@pytest.fixture
def holder(session: Path, spawn_holder: Spawn) -> subprocess.Popen[str]:
    child, state = spawn_holder(session)
    assert state == "writable"
    return child


def test_second_process_is_read_only_with_a_plain_reason(
    session: Path, holder: subprocess.Popen[str]
) -> None:
    with JournalWriter.open(session) as early:  # the holder has only opened: no record yet
        assert early.read_only
        assert "open for writing in another Pi Desktop window" in (early.read_only_reason or "")
    assert tell(holder, "append").startswith("ACK ")  # its first row names it in the record
    with JournalWriter.open(session) as second:
        assert second.read_only
        reason = second.read_only_reason or ""
        assert "open for writing in another Pi Desktop window" in reason
        assert f"process {holder.pid}" in reason
        assert "read-only" in reason and "close it there" in reason
        with pytest.raises(LocalPreparationFailure) as caught:
            second.append([NoteRow(level="info", text="should not land")])
        assert caught.value.kind == "read_only" and reason in caught.value.user_message

        # the holder keeps writing; the read-only view can catch up
        ack_line = tell(holder, "append")
        assert ack_line.startswith("ACK ")
        assert second.refresh() == 1
        assert second.rows[-1]["id"] == ack_line.split()[1]

    assert tell(holder, "close") == "closed"
    with JournalWriter.open(session) as third:
        assert not third.read_only and third.read_only_reason is None
        third.append([NoteRow(level="info", text="now writable")])
    assert len(read_session(session).rows) == 4


def test_a_killed_holder_releases_the_lock(session: Path, holder: subprocess.Popen[str]) -> None:
    with JournalWriter.open(session) as second:
        assert second.read_only
    holder.kill()
    holder.wait(timeout=10)
    with JournalWriter.open(session) as third:
        assert not third.read_only


def test_second_open_in_the_same_process_is_read_only_too(session: Path) -> None:
    with JournalWriter.open(session) as first, JournalWriter.open(session) as second:
        assert not first.read_only and second.read_only
        assert "this same Pi Desktop window" in (second.read_only_reason or "")
    with JournalWriter.open(session) as again:
        assert not again.read_only


def test_read_only_on_request_takes_no_lock(session: Path) -> None:
    with JournalWriter.open(session, read_only=True) as viewer, JournalWriter.open(session) as writer:
        assert viewer.read_only and viewer.read_only_reason == "Opened read-only on request."
        assert not writer.read_only
