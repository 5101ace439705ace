"""A what-if on a 10,000-row session keeps the window live, shows progress and stops on Cancel
(design X8).

The session opens through the real worker, then the What if tab asks the worker for the
replay. A 5 ms timer probe (as ``test_open_large.py`` runs it) records every gap in the GUI
event loop while the replay runs; the tab's progress bar must move, and Cancel must end the
replay with "cancelled" long before it would have finished.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from desktop.bench.whatif_session import write
from desktop.ui.main_window import MainWindow
from tests.ui.conftest import tick_probe

STALL = 0.5
"""Seconds the event loop may stall while the worker replays: generous for a loaded machine
(the replay is pure Python on the worker thread, which gives up the interpreter every few
milliseconds)."""


def test_a_long_whatif_shows_progress_keeps_the_window_live_and_cancels(
    started_window: tuple[MainWindow, Any], qtbot: Any, tmp_path: Path
) -> None:
    win, client = started_window
    path = write(tmp_path / "long.jsonl", round(10_000 / 4.25))  # about 10,000 rows
    client.open_session.emit(str(path))
    qtbot.waitUntil(lambda: getattr(win.session, "path", None) == str(path), timeout=300_000)
    view = win.inspect.whatif

    probe, ticks = tick_probe(qtbot)
    start = time.perf_counter()
    win.tabs.setCurrentIndex(win.inspect.whatif_index)
    assert view.cancel_button.isVisible() and view.progress.isVisible()
    # Progress shown: the bar moves past the first pass's start and the status names the pass.
    qtbot.waitUntil(lambda: view.progress.value() > 0, timeout=300_000)
    assert view.status.text().startswith("Replaying: ") and "request" in view.status.text()
    moved = time.perf_counter()
    qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "cancelled" in view.status.text(), timeout=120_000)
    stopped = time.perf_counter()
    qtbot.wait(50)
    probe.stop()

    assert not view.cancel_button.isVisible() and not view.progress.isVisible()
    assert view.result == {} and view.table.rowCount() == 0  # no partial table
    during = [t for t in ticks if start <= t <= stopped]
    assert len(during) >= 3, f"the event loop ran only {len(during)} times during the replay"
    worst = max(b - a for a, b in itertools.pairwise([start, *during, stopped]))
    print(
        f"\nwhat-if on {path.stat().st_size / 1e6:.1f} MB: progress after {moved - start:.2f} s, "
        f"cancelled {stopped - moved:.2f} s after the click; worst stall {worst * 1000:.0f} ms"
    )
    assert worst <= STALL, f"the GUI stalled {worst * 1000:.0f} ms during the replay"
    # The worker is free again: a query posted now runs (the replay did not run on).
    done: list[bool] = []
    client.ops.query(lambda _worker: None, lambda _none: done.append(True))
    qtbot.waitUntil(lambda: bool(done), timeout=60_000)
