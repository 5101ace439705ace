"""A long session's newest rows are on screen before the whole file is read (design X32).

The worker reads the header line and the last 256 KB with the journal's own reader, the window
paints those rows, then the one full reading replaces them. These tests check that the partial
index holds exactly the rows the full one ends with, that the window shows no figure from it,
and that a real open sends the two in that order.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from desktop.ui.main_window import MainWindow
from desktop.ui.messages import SessionIndexed
from desktop.ui.row_index import TAIL_BYTES, read_indexed, read_tail
from tests.ui.synthetic import bench_session


@pytest.fixture(scope="module")
def long_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = bench_session(tmp_path_factory.mktemp("long") / "long.jsonl", 6_000)
    assert path.stat().st_size > 4 * TAIL_BYTES
    return path


def test_the_tail_index_holds_the_rows_the_full_index_ends_with(long_session: Path) -> None:
    tail = read_tail(long_session)
    _log, full = read_indexed(long_session)
    assert tail is not None and 100 < len(tail) < len(full)
    assert tail.ids == full.ids[-len(tail) :]
    assert tail.kinds == full.kinds[-len(tail) :]
    assert [tail.raw(i) for i in (0, len(tail) - 1)] == [
        full.raw(len(full) - len(tail)),
        full.raw(len(full) - 1),
    ]


def test_a_torn_last_line_is_left_out_of_the_tail_as_of_the_whole(long_session: Path, tmp_path: Path) -> None:
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(long_session.read_bytes() + b'{"type":"user","v":1,"id":"cut-off","mess')
    tail = read_tail(torn)
    _log, full = read_indexed(torn)
    assert tail is not None and "cut-off" not in tail.ids and "cut-off" not in full.ids
    assert tail.ids == full.ids[-len(tail) :]


def test_a_short_session_is_read_whole_at_once(tmp_path: Path, long_session: Path) -> None:
    short = tmp_path / "short.jsonl"
    with long_session.open("rb") as handle:
        short.write_bytes(b"".join(handle.readline() for _ in range(200)))
    assert read_tail(short) is None


def test_the_window_shows_no_figure_from_the_partial_index(window: MainWindow, long_session: Path) -> None:
    tail = read_tail(long_session)
    assert tail is not None
    window.on_session_indexed(SessionIndexed(str(long_session), "", tail, threading.Event(), partial=True))
    assert window.timeline.rowCount() == len(tail)
    assert window.usage_view.model.rowCount() == 0  # the tail's usage is part of the bill
    assert window.statusBar().currentMessage() == f"Reading {long_session.name}…"
    _log, full = read_indexed(long_session)
    window.on_session_indexed(SessionIndexed(str(long_session), "", full, threading.Event()))
    assert window.timeline.rowCount() == len(full)
    assert window.usage_view.model.rowCount() == len(full.usage) > 0
    assert window.statusBar().currentMessage() == ""


def test_opening_a_long_session_paints_its_newest_rows_first(
    started_window: tuple[MainWindow, Any], long_session: Path, qtbot: Any
) -> None:
    win, client = started_window
    sent: list[SessionIndexed] = []
    # Called on the worker's thread as it emits: the order the window receives them in.
    win.worker.session_indexed.connect(sent.append)
    client.open_session.emit(str(long_session))
    qtbot.waitUntil(lambda: getattr(win.session, "path", None) == str(long_session), timeout=120_000)
    assert [m.partial for m in sent] == [True, False]
    partial, full = sent[0].index, sent[1].index
    assert partial.ids == full.ids[-len(partial) :] and len(partial) < len(full)
    assert win.timeline.rowCount() == len(full)
    assert win.usage_view.model.rowCount() == len(full.usage)
