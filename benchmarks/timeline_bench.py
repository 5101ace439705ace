"""Timeline benchmark: scrolling and filtering a 100,000-row timeline cost what 1,000 rows cost.

Run from the repository root (offscreen, no display needed)::

    PYTHONPATH=$PWD QT_QPA_PLATFORM=offscreen python benchmarks/timeline_bench.py [--rows 100000] [--rounds 9]

Two windows (1280x800, worker never started) show two sessions of the same mix, 100,000 rows
and 1,000 rows (the anchor), from their row indexes, as the window shows a session the worker
opened (design G9): no row is decoded until it is painted. Measured on each, interleaved round
by round through ``_bench.compare`` (a round each first, uncounted), wall time (what the user
waits), min and median of ``--rounds``:

* a jump: the scroll bar moved to a random position and the viewport repainted at once (what
  dragging the bar or Page Down costs; 30 jumps per round, decoded rows included);
* showing the hidden system rows, and hiding them again: the longest event-loop gap (a 5 ms
  timer probe) from the menu's toggle until the layout has settled.

Opening the session (first paint, stalls, memory) is ``open_bench.py``, which goes through the
real worker; ``make_session`` here writes the mix both benchmarks (and ``startup_bench.py``) use.
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import compare, report

ROOT = Path(__file__).resolve().parent.parent


def make_session(path: Path, rows: int) -> None:
    """A realistic mix: turns of user/assistant (usage) rows, tool results, hidden system rows."""
    sys.path.insert(0, str(ROOT))
    from desktop.host.journal import JournalWriter

    writer = JournalWriter.create(path, cwd="/bench", app_version="bench")
    batch: list[dict[str, Any]] = []
    n = 0
    turn = 0
    while n < rows:
        ts = 1_700_000_000_000 + n
        if turn % 10 == 0:
            batch.append(
                {
                    "type": "system",
                    "v": 1,
                    "id": f"s{n}",
                    "ts": ts,
                    "label": "sections: guidance",
                    "modelSystem": {
                        "v": 1,
                        "message": {
                            "role": "system",
                            "content": "",
                            "sections": {"guidance": f"rev {turn}"},
                            "timestamp": ts,
                        },
                    },
                }
            )
            n += 1
        batch.append(
            {
                "type": "user",
                "v": 1,
                "id": f"u{n}",
                "ts": ts,
                "message": {
                    "role": "user",
                    "content": f"Question {turn}: please look at module {turn % 97} and explain the failing test.",
                    "timestamp": ts,
                },
            }
        )
        n += 1
        batch.append(
            {
                "type": "assistant",
                "v": 1,
                "id": f"a{n}",
                "ts": ts,
                "route": {
                    "provider": "anthropic",
                    "model": "claude-opus-5-5",
                    "api": "anthropic-messages",
                    "baseUrl": "x",
                },
                "message": {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "text",
                            "text": f"Answer {turn}: the failure comes from an off-by-one in the loop. " * 3,
                        },
                        {
                            "type": "toolCall",
                            "id": f"c{n}",
                            "name": "read",
                            "arguments": {"path": f"src/m{turn % 97}.py"},
                        },
                    ],
                    "api": "anthropic-messages",
                    "provider": "anthropic",
                    "model": "claude-opus-5-5",
                    "usage": {
                        "input": 120,
                        "output": 80,
                        "cacheRead": 4000 + turn,
                        "cacheWrite": 200,
                        "totalTokens": 4400,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0.0031},
                    },
                    "stopReason": "toolUse",
                    "timestamp": ts,
                },
            }
        )
        n += 1
        batch.append(
            {
                "type": "toolResult",
                "v": 1,
                "id": f"t{n}",
                "ts": ts,
                "message": {
                    "role": "toolResult",
                    "toolCallId": f"c{n - 1}",
                    "toolName": "read",
                    "content": [{"type": "text", "text": "def f(x):\n    return x + 1\n" * 4}],
                    "isError": False,
                    "timestamp": ts,
                },
            }
        )
        n += 1
        turn += 1
        if len(batch) >= 2000:
            writer.append(batch)
            batch = []
    if batch:
        writer.append(batch)
    writer.close()


# --- measurement (one process, both sizes interleaved) ------------------------------------------


def _window(path: Path) -> tuple[Any, Any]:
    """A window showing ``path`` from its row index, as after the worker's ``session_indexed``."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from desktop.ui.main_window import MainWindow
    from desktop.ui.messages import SessionIndexed
    from desktop.ui.row_index import read_indexed
    from desktop.ui.worker import SessionWorker, WorkerClient

    app = QApplication.instance() or QApplication([])
    worker = SessionWorker()
    window = MainWindow(worker, WorkerClient(worker))
    window.resize(1280, 800)
    window.show()
    window.on_session_indexed(SessionIndexed(str(path), "", read_indexed(path)[1], threading.Event()))
    _settle(app, window)
    return app, window


def _settle(app: Any, window: Any) -> None:
    """Process events until the scroll range has not changed for half a second (layout done)."""
    bar = window.view.verticalScrollBar()
    last, since = -1, time.perf_counter()
    while time.perf_counter() - since < 0.5:
        app.processEvents()
        if bar.maximum() != last:
            last, since = bar.maximum(), time.perf_counter()


def _jumps(app: Any, window: Any, rng: random.Random, count: int) -> list[float]:
    bar = window.view.verticalScrollBar()
    viewport = window.view.viewport()
    times = []
    for _ in range(count):
        target = rng.randint(0, bar.maximum())
        start = time.perf_counter()
        bar.setValue(target)
        viewport.repaint()
        times.append(time.perf_counter() - start)
    app.processEvents()
    return times


def _toggle(app: Any, window: Any, show: bool) -> float:
    """The longest event-loop gap (a 5 ms timer probe) from the toggle until the layout settles."""
    from PySide6.QtCore import QTimer

    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    probe = QTimer()
    probe.timeout.connect(tick)
    probe.start(5)
    QTimer.singleShot(0, lambda: window.set_show_hidden(show))
    _settle(app, window)
    probe.stop()
    return max(gaps)


def _round(app: Any, window: Any, rng: random.Random) -> dict[str, list[float]]:
    """One round on one window: 30 jumps, then the hidden rows shown and hidden (ms)."""
    return {
        "jump": [t * 1000 for t in _jumps(app, window, rng, 30)],
        "show": [_toggle(app, window, True) * 1000],
        "hide": [_toggle(app, window, False) * 1000],
    }


def measure(large: Path, small: Path, rounds: int) -> dict[str, dict[str, list[float]]]:
    cases = {
        side: functools.partial(_round, *_window(path), random.Random(1))
        for side, path in (("large", large), ("small", small))
    }
    measured = compare(cases, rounds)
    return {
        side: {step: [t for one in records for t in one[step]] for step in ("jump", "show", "hide")}
        for side, records in measured.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--anchor-rows", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        large, small = Path(tmp) / "large.jsonl", Path(tmp) / "small.jsonl"
        make_session(large, args.rows)
        make_session(small, args.anchor_rows)
        print(
            f"sessions: {args.rows:,} rows ({large.stat().st_size / 1e6:.1f} MB), anchor {args.anchor_rows:,} rows"
        )
        result = measure(large, small, args.rounds)
    anchor = f"the same in {args.anchor_rows:,} rows"
    big, small_side = result["large"], result["small"]
    report(
        f"timeline: jump and repaint in {args.rows:,} rows",
        big["jump"],
        small_side["jump"],
        anchor_name=anchor,
        unit="ms wall",
        budget=1.5,
    )
    for step, label in (("show", "show hidden rows"), ("hide", "hide them again")):
        report(f"timeline: {label} in {args.rows:,} rows, longest stall", big[step], unit="ms wall", limit=50)
        report(
            f"timeline: {label} in {args.anchor_rows:,} rows, longest stall", small_side[step], unit="ms wall"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
