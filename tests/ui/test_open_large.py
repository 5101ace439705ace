"""Opening a 100,000-row session through the real worker keeps the window live (design G9).

The user picks the file (``client.open_session``, what File → Open emits); the worker indexes
it, sends the index as one object, and the window paints the timeline while the runtime is
still being assembled. A 5 ms timer probe runs from the pick until the session is fully open
and records every gap in the GUI event loop. Timings are ratios against a bare ``orjson`` parse of the
same file measured in the same test, and bounds are generous: the machine may be loaded.
``benchmarks/open_bench.py`` reports the exact figures.
"""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from PySide6.QtCore import QEvent, QObject, Qt

from desktop.host.journal import JournalWriter, model_order, reader
from desktop.pi.cache_misses import MissCounter
from desktop.ui.main_window import MainWindow
from desktop.ui.messages import IndexedRows, SessionOpened
from desktop.ui.row_index import RowIndex, read_indexed
from desktop.ui.rowinfo import row_kind
from desktop.ui.timeline_model import ROW_ROLE
from tests.ui.conftest import tick_probe
from tests.ui.synthetic import bench_session

SIZES = [pytest.param(20_000, id="20k"), pytest.param(100_000, id="100k", marks=pytest.mark.slow)]
SETTLED_STALL = 0.2
"""Seconds the event loop may stall between the first paint and the settled worker: four times
the benchmark's target, for a loaded machine (20 to 45 ms seen here at 100,000 rows). Before the
worker waited for the window's paints and searched its lines in chunks, the 100,000-row open
stalled 250 to 280 ms there; at Python's default switch interval (5 ms, not the window's 1 ms),
a repaint during the post-open work stalled 250 to 380 ms in about half the runs."""


@pytest.fixture(scope="module", params=SIZES)
def long_session(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bench_session(tmp_path_factory.mktemp("long") / "long.jsonl", request.param)


class Paints(QObject):
    """Records when the timeline first paints with the long session's rows in it."""

    def __init__(self, window: MainWindow, rows: int) -> None:
        super().__init__()
        self.window = window
        self.rows = rows
        self.first: float | None = None

    def eventFilter(self, _obj: QObject, event: QEvent) -> bool:
        painted = event.type() == QEvent.Type.Paint
        if painted and self.first is None and self.window.timeline.rowCount() >= self.rows:
            self.first = time.perf_counter()
        return False


def test_a_long_session_opens_without_stalling_the_window(
    started_window: tuple[MainWindow, Any], long_session: Path, qtbot: Any
) -> None:
    win, client = started_window
    start = time.perf_counter()
    with open(long_session, "rb") as handle:
        parsed = [orjson.loads(line) for line in handle]
    parse_seconds = time.perf_counter() - start
    rows = len(parsed) - 1
    del parsed

    paints = Paints(win, rows)
    win.view.viewport().installEventFilter(paints)
    probe, ticks = tick_probe(qtbot)
    pick = time.perf_counter()
    client.open_session.emit(str(long_session))
    qtbot.waitUntil(lambda: paints.first is not None, timeout=120_000)
    # On until the session is fully open: the worker reads the journal again after the paint
    # while the view lays the rows out and repaints.
    qtbot.waitUntil(lambda: getattr(win.session, "path", None) == str(long_session), timeout=300_000)
    opened = time.perf_counter()
    # And on until the worker has settled: a query posted now runs after everything the open
    # queued (status, activation check, the compaction preview the window asks for).
    done: list[float] = []
    client.ops.query(lambda _worker: None, lambda _none: done.append(time.perf_counter()))
    qtbot.waitUntil(lambda: bool(done), timeout=300_000)
    settled = done[0]
    qtbot.wait(50)
    probe.stop()
    first_paint = paints.first
    assert first_paint is not None

    # The probe ran through the whole operation, before and after the pick and past the paint.
    during = [t for t in ticks if pick <= t <= first_paint]
    assert ticks[0] < pick and ticks[-1] > first_paint
    assert len(during) >= 3, f"the event loop ran only {len(during)} times while the session opened"
    marks = [pick, *during, first_paint]
    worst = max(b - a for a, b in itertools.pairwise(marks))
    elapsed = first_paint - pick
    print(
        f"\nopen {rows:,} rows: first paint {elapsed:.2f} s = {elapsed / parse_seconds:.2f}x an orjson parse "
        f"({parse_seconds:.2f} s); worst stall {worst * 1000:.0f} ms over {len(during)} ticks"
    )
    # Generous on a loaded machine, where the scheduler alone can hold a thread back for a few
    # hundred milliseconds: the event loop kept running through the open (a window that did the
    # open on its own thread, or froze until the worker finished, stalls for all of it). The
    # benchmark holds the real targets (50 ms, 1.5x).
    assert worst <= max(0.5 * elapsed, 0.3), f"the GUI stalled {worst * 1000:.0f} ms of {elapsed:.2f} s"
    assert elapsed <= 4 * parse_seconds, f"first paint took {elapsed / parse_seconds:.1f}x a bare parse"
    # After the paint, until fully open, the same: a view that asked the Python model for every
    # row while the worker held the GIL stalled for a second and more here.
    after = [t for t in ticks if first_paint <= t <= opened]
    worst_after = max((b - a for a, b in itertools.pairwise([first_paint, *after, opened])), default=0.0)
    rest = opened - first_paint
    print(
        f"then fully open {rest:.2f} s later; worst stall {worst_after * 1000:.0f} ms over {len(after)} ticks"
    )
    assert worst_after <= max(0.5 * rest, 0.5), f"the GUI stalled {worst_after * 1000:.0f} ms of {rest:.2f} s"
    # From the paint until settled, at any length: a repaint of the timeline while the worker
    # runs Python waits for the GIL at every row (a quarter second on the 100,000-row open,
    # before the worker waited for the window's paints), so the window must not be left to
    # repaint while the worker works on. The benchmark holds the 50 ms target.
    later = [t for t in ticks if first_paint <= t <= settled]
    worst_settled = max((b - a for a, b in itertools.pairwise([first_paint, *later, settled])), default=0.0)
    print(f"settled {settled - first_paint:.2f} s after the paint; worst stall {worst_settled * 1000:.0f} ms")
    assert worst_settled <= SETTLED_STALL, (
        f"the GUI stalled {worst_settled * 1000:.0f} ms before the worker settled"
    )

    # The window holds the index, not the rows: only the rows painted were read from the file.
    timeline = win.timeline
    assert isinstance(timeline.index_shown, RowIndex)
    assert len(timeline.index_shown) >= rows
    reader = timeline._reader
    assert reader is not None and len(reader._cache) < 500
    # A row read on demand is the row in the file. The open itself may already have appended
    # rows after the index (the continuation's notes), so take the last row that came from it.
    shown = win.shown.rowCount() - 1
    while not isinstance(timeline._refs[win.shown.position(win.shown.index(shown, 0))], int):
        shown -= 1
    last = win.shown.index(shown, 0)
    row = last.data(ROW_ROLE)
    entry = timeline._refs[win.shown.position(last)]
    assert isinstance(entry, int)
    assert row["id"] == timeline.index_shown.ids[entry] and row["type"] != "system"


def test_the_index_lists_the_journal_rows_in_model_order(tmp_path: Path) -> None:
    """Same rows, same order as the journal reader and ``model_order``; torn tails and bad lines
    are left out exactly as the reader leaves them out."""
    path = tmp_path / "s.jsonl"
    writer = JournalWriter.create(path, cwd="/w", app_version="test")
    writer.append(
        [
            {"type": "user", "v": 1, "id": "u1", "ts": 1, "message": {"role": "user", "content": "hi"}},
            {
                "type": "system",
                "v": 1,
                "id": "s1",
                "ts": 2,
                "before": "u1",
                "label": "sections",
                "modelSystem": {"v": 1, "message": {"role": "system", "content": "", "sections": {"a": "b"}}},
            },
            {
                "type": "assistant",
                "v": 1,
                "id": "a1",
                "ts": 3,
                "route": {"provider": "p", "model": "m", "api": "anthropic-messages", "baseUrl": "x"},
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "hello"}],
                    "usage": {
                        "input": 3,
                        "output": 2,
                        "cacheRead": 1,
                        "cacheWrite": 0,
                        "cost": {"total": 0.5},
                    },
                    "stopReason": "stop",
                    "model": "m",
                },
            },
        ]
    )
    writer.close()
    with open(path, "ab") as handle:
        handle.write(b"not json\n")
        handle.write(orjson.dumps({"type": "note", "v": 1, "id": "u1", "ts": 4, "text": "dup"}) + b"\n")
        handle.write(b'{"type": "note", "v": 1, "id": "torn"')
    reading, index = read_indexed(path)
    with JournalWriter.open(path, read_only=True) as journal:
        expected = [row["id"] for row in model_order(journal.rows)]
        kinds = bytes(row_kind(row) for row in model_order(journal.rows))
    assert list(index.ids) == expected == ["s1", "u1", "a1"]
    assert index.kinds == kinds
    assert [line.row_id for line in index.usage] == ["a1"] and index.usage_total.cost == 0.5
    assert index.rows is reading.rows
    for entry, row_id in enumerate(index.ids):
        assert orjson.loads(index.raw(entry))["id"] == row_id


def test_a_long_session_fully_open_keeps_the_index_not_the_rows(
    started_window: tuple[MainWindow, Any], long_session: Path, qtbot: Any
) -> None:
    """The open itself journals rows (the continuation's system update, notes): the window
    gets the index with those rows after it, never every row of the session decoded."""
    win, client = started_window
    sent: list[SessionOpened] = []
    win.worker.session_opened.connect(sent.append, Qt.ConnectionType.DirectConnection)
    client.open_session.emit(str(long_session))
    qtbot.waitUntil(lambda: getattr(win.session, "path", None) == str(long_session), timeout=300_000)
    (opened,) = sent
    assert isinstance(opened.rows, IndexedRows)
    index = opened.rows.index
    assert isinstance(index, RowIndex) and win.timeline.index_shown is index
    appended = opened.rows.appended
    assert all(row["id"] not in index.ids for row in appended)
    assert win.timeline.rowCount() == len(index) + len(appended)


def test_opening_parses_the_file_once(
    started_window: tuple[MainWindow, Any], tmp_path: Path, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine's reading of the file is the timeline's (design X26): one parse on open, and
    the index the window shows lists the opened journal's own rows."""
    path = bench_session(tmp_path / "s.jsonl", 300)
    rows_in_file = len(path.read_bytes().splitlines()) - 1
    decoded = [0]
    loads = orjson.loads

    def counting(data: Any) -> Any:
        decoded[0] += 1
        return loads(data)

    class CountingDecoder:
        """A message row's line is decoded by msgspec straight into its type (design X29)."""

        def __init__(self, decoder: Any) -> None:
            self.decoder = decoder

        def decode(self, data: bytes) -> Any:
            decoded[0] += 1
            return self.decoder.decode(data)

    win, client = started_window
    monkeypatch.setattr(reader.orjson, "loads", counting)
    for name, (decoder, code) in list(reader._LINE_DECODERS.items()):
        monkeypatch.setitem(reader._LINE_DECODERS, name, (CountingDecoder(decoder), code))
    client.open_session.emit(str(path))
    qtbot.waitUntil(lambda: getattr(win.session, "path", None) == str(path), timeout=60_000)
    index = win.timeline.index_shown
    assert isinstance(index, RowIndex) and len(index) == rows_in_file
    assert index.rows is win.worker.writer.rows
    assert rows_in_file <= decoded[0] < 2 * rows_in_file


def test_the_usage_misses_are_counted_on_the_worker(
    started_window: tuple[MainWindow, Any], long_session: Path, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every request's cache-miss count is made while the worker indexes the file (design X30):
    the window's usage model takes a copy of it and counts nothing at open (counting 32,000
    requests on the GUI thread held the first paint of 100,000 rows for a tenth of a second)."""
    gui = threading.get_ident()
    counted_on_gui: list[tuple[Any, ...]] = []
    count = MissCounter.add

    def add(self: MissCounter, *figures: Any) -> None:
        if threading.get_ident() == gui:
            counted_on_gui.append(figures)
        count(self, *figures)

    monkeypatch.setattr(MissCounter, "add", add)
    win, client = started_window
    client.open_session.emit(str(long_session))
    qtbot.waitUntil(lambda: getattr(win.session, "path", None) == str(long_session), timeout=300_000)
    index = win.timeline.index_shown
    assert isinstance(index, RowIndex) and index.misses.misses > 0
    assert counted_on_gui == []
    model = win.usage_view.model
    assert model.misses is not index.misses and model.misses.text() == index.misses.text()
