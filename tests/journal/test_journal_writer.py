"""Writer basics (design T1, T3, T4): header, group commit, acks, idempotent retry, model order, store."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec
import orjson
import pytest

from desktop.host import paths
from desktop.host.journal import (
    Ack,
    JournalWriter,
    ModelSystem,
    NotAcknowledged,
    NoteRow,
    SessionStore,
    SystemRow,
    UserRow,
    model_order,
    read_session,
)
from desktop.host.journal.store import describe


def user(text: str) -> UserRow:
    return UserRow(message={"role": "user", "content": text, "timestamp": 1})


def system(before: str | None = None, label: str = "s") -> SystemRow:
    message = {"role": "system", "content": label, "timestamp": 1}
    return SystemRow(modelSystem=ModelSystem(message=message), before=before, label=label)


def test_create_writes_a_versioned_header_and_nothing_else(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "s.jsonl"
    with JournalWriter.create(path, cwd="/work/proj", app_version="1.2.3", session_id="sess-1") as writer:
        assert writer.session_id == "sess-1" and writer.rows == []
    [line] = path.read_bytes().splitlines()
    header = orjson.loads(line)
    assert header["type"] == "session" and header["v"] == 1 and header["id"] == "sess-1"
    assert header["app"] == "pi-desktop" and header["appVersion"] == "1.2.3" and header["cwd"] == "/work/proj"
    assert isinstance(header["ts"], int)
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")], "no temporary file left"
    with pytest.raises(FileExistsError):
        JournalWriter.create(path, cwd="/", app_version="1")


def test_one_fsync_per_batch_and_ack_lists_the_batch(tmp_path: Path) -> None:
    with JournalWriter.create(tmp_path / "s.jsonl", cwd="/", app_version="t") as writer:
        turn = [user("q"), system(label="a"), system(label="b")]
        ack = writer.append(turn)
        assert writer.syncs == 1 and ack.syncs == 1
        assert ack.ids == ack.written == tuple(r.id for r in turn)
        writer.append([NoteRow(level="info", text="n")])
        assert writer.syncs == 2
        assert [r["id"] for r in writer.rows] == [*ack.ids, writer.rows[-1]["id"]]


def test_retry_with_held_ids_writes_nothing_and_costs_no_fsync(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with JournalWriter.create(path, cwd="/", app_version="t") as writer:
        first, second = user("a"), user("b")
        writer.append([first])
        ack = writer.append([first, second, second])  # retry of one plus a new one, duplicated
        assert ack.ids == (first.id, second.id, second.id) and ack.written == (second.id,)
        again = writer.append([first, second])
        assert again.written == () and again.syncs == 0 and writer.syncs == 2
    with JournalWriter.open(path) as reopened:  # ids held from disk count too
        assert reopened.append([msgspec.structs.replace(user("a-copy"), id=first.id)]).written == ()
    assert [r["id"] for r in read_session(path).rows] == [first.id, second.id]


def test_ack_cannot_be_forged_and_guards_dispatch(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        Ack(tmp_path, "s", ("x",), ("x",), 1, object())
    with JournalWriter.create(tmp_path / "s.jsonl", cwd="/", app_version="t") as writer:
        prompt = user("p")
        early = writer.append([prompt])  # the user row persisted before the turn is prepared
        update = system(before=prompt.id)
        writer.append([update])
        turn = [prompt.id, update.id]
        with pytest.raises(NotAcknowledged, match="not durable"):
            early.require(turn)
        retried = writer.append([prompt, update])  # already durable: acknowledged, nothing written
        retried.require(turn)
        with pytest.raises(NotAcknowledged):
            retried.require([*turn, "never-written"])


def test_model_order_places_anchored_updates_before_their_user_row(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with JournalWriter.create(path, cwd="/", app_version="t") as writer:
        u1 = user("first")
        s0 = system(label="plain")
        u2 = user("second")
        a1, a2 = system(before=u2.id, label="a1"), system(before=u2.id, label="a2")
        dangling = system(before="no-such-row", label="dangling")
        chained = system(before=a1.id, label="chained")
        writer.append([u1, s0, u2])
        writer.append([a1, a2, dangling, chained])
    rows = read_session(path).rows
    labels = [r.get("label") or r["message"]["content"] for r in model_order(rows)]
    assert labels == ["first", "plain", "a1", "a2", "second", "dangling", "chained"]
    assert [r["id"] for r in rows] == [u1.id, s0.id, u2.id, a1.id, a2.id, dangling.id, chained.id]
    assert model_order(list(reversed(rows)))[0]["label"] == "chained"  # a pure function of its input


def test_store_lives_under_the_data_dir_env_and_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(paths.DATA_DIR_ENV, str(tmp_path / "env"))
    store = SessionStore()
    with store.create("/home/me/proj", app_version="t") as writer:
        writer.append([user("hi")])
    assert writer.path.is_relative_to(tmp_path / "env" / "sessions")
    assert store.session_files() == [writer.path]
    info = describe(writer.path)
    assert info.id == writer.session_id and info.cwd == "/home/me/proj" and info.problem is None
    assert store.session_files("/elsewhere") == []

    flagged = SessionStore(data_dir=str(tmp_path / "flag"))
    assert flagged.root == tmp_path / "flag" / "sessions"
    assert os.environ[paths.DATA_DIR_ENV] == str(tmp_path / "env")


def test_open_takes_a_reading_of_the_unchanged_file_and_reads_a_changed_one_again(tmp_path: Path) -> None:
    """The window reads the file once to show it, then opens it (design X26): the writer takes
    that reading while the locked file is still the one read, else reads the file again."""
    path = tmp_path / "s.jsonl"
    with JournalWriter.create(path, cwd="/w", app_version="t") as writer:
        writer.append([user("one")])
    reading = read_session(path)
    with JournalWriter.open(path, read=reading) as journal:
        assert journal.rows is reading.rows
        journal.append([user("two")])
    with JournalWriter.open(path, read=reading) as journal:  # the file grew since the reading
        assert journal.rows is not reading.rows
        assert [row["message"]["content"] for row in journal.rows] == ["one", "two"]
    with JournalWriter.open(path, read_only=True, read=read_session(path)) as journal:
        assert len(journal.rows) == 2
