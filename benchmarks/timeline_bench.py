"""Timeline benchmark: a 100,000-row session opens to first paint and scrolls end to end.

Run from the repository root (offscreen, no display needed)::

    PYTHONPATH=$PWD python benchmarks/timeline_bench.py [--rows 100000] [--json out.json]

Each measurement runs in a fresh subprocess so its peak memory (``ru_maxrss``) is its own:

* ``baseline``: read the file and ``orjson.loads`` every line into a list (the floor any
  viewer pays);
* ``qt-empty``: a QApplication and the empty main window (what Qt itself costs);
* ``open``: the journal read exactly as the worker does it (``JournalWriter.open`` read-only,
  ``model_order``), handing the rows to the window, until the timeline's first paint;
* ``scroll``: page through the whole timeline from top to bottom, painting every page
  synchronously; reports pages, total time and the slowest frame.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def peak_mb() -> float:
    """This process's peak resident memory. ``VmHWM`` restarts at exec, unlike ``ru_maxrss``,
    which a child inherits from the parent that generated the session file."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


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


# --- phases (each runs in its own process) -----------------------------------------------------


def phase_baseline(path: Path) -> dict[str, Any]:
    import orjson

    start = time.perf_counter()
    with open(path, "rb") as handle:
        rows = [orjson.loads(line) for line in handle]
    elapsed = time.perf_counter() - start
    return {"seconds": elapsed, "rows": len(rows) - 1, "peak_mb": peak_mb()}


def _window() -> tuple[Any, Any]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from desktop.ui.main_window import MainWindow
    from desktop.ui.worker import SessionWorker, WorkerClient

    app = QApplication.instance() or QApplication([])
    worker = SessionWorker()
    window = MainWindow(worker, WorkerClient(worker))
    window.resize(1280, 800)
    return app, window


def phase_qt_empty(_path: Path) -> dict[str, Any]:
    start = time.perf_counter()
    app, window = _window()
    window.show()
    app.processEvents()
    return {"seconds": time.perf_counter() - start, "peak_mb": peak_mb()}


class _PaintProbe:
    def __init__(self, widget: Any) -> None:
        from PySide6.QtCore import QEvent, QObject

        class Filter(QObject):
            painted = 0

            def eventFilter(self, _obj: Any, event: Any) -> bool:
                if event.type() == QEvent.Type.Paint:
                    Filter.painted += 1
                return False

        self.filter = Filter()
        widget.installEventFilter(self.filter)
        self.kind = Filter

    @property
    def painted(self) -> int:
        return self.kind.painted


def phase_open(path: Path) -> dict[str, Any]:
    from desktop.host.journal import JournalWriter, model_order

    app, window = _window()
    window.show()
    app.processEvents()
    probe = _PaintProbe(window.view.viewport())
    start = time.perf_counter()
    with JournalWriter.open(path, read_only=True) as journal:
        rows = model_order(list(journal.rows))
        read_done = time.perf_counter()
        before = probe.painted
        window.on_session_opened({"path": str(path), "id": journal.session_id, "cwd": "/bench", "rows": rows})
        model_done = time.perf_counter()
        while probe.painted == before:
            app.processEvents()
        painted = time.perf_counter()
    return {
        "seconds": painted - start,
        "read_seconds": read_done - start,
        "model_seconds": model_done - read_done,
        "paint_seconds": painted - model_done,
        "rows": len(rows),
        "visible_rows": window.filter.rowCount(),
        "peak_mb": peak_mb(),
    }


def _settle(app: Any, window: Any) -> None:
    """Let the batched layout finish: process events until the scroll range stops growing."""
    bar = window.view.verticalScrollBar()
    last, since = -1, time.perf_counter()
    while time.perf_counter() - since < 1.0:  # the range unchanged for 1 s: the batched layout is done
        app.processEvents()
        if bar.maximum() != last:
            last, since = bar.maximum(), time.perf_counter()


def phase_stall(path: Path) -> dict[str, Any]:
    """The longest event-loop gap (a 5 ms timer probe) while a long session opens and lays out,
    and while hidden system rows are toggled on and off."""
    from PySide6.QtCore import QTimer

    from desktop.host.journal import JournalWriter, model_order

    app, window = _window()
    window.show()
    app.processEvents()
    with JournalWriter.open(path, read_only=True) as journal:
        rows = model_order(list(journal.rows))
    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(5)
    worst: dict[str, float] = {}
    steps = {
        "open": lambda: window.on_session_opened({"path": str(path), "id": "b", "cwd": "/b", "rows": rows}),
        "show": lambda: window.set_show_hidden(True),
        "hide": lambda: window.set_show_hidden(False),
    }
    start = time.perf_counter()
    for name, step in steps.items():
        gaps.clear()
        last[0] = time.perf_counter()
        QTimer.singleShot(0, step)
        _settle(app, window)
        worst[name] = max(gaps) * 1000
    return {
        "seconds": time.perf_counter() - start,
        "worst_open_ms": worst["open"],
        "worst_show_ms": worst["show"],
        "worst_hide_ms": worst["hide"],
        "peak_mb": peak_mb(),
    }


def phase_scroll(path: Path) -> dict[str, Any]:
    from desktop.host.journal import JournalWriter, model_order

    app, window = _window()
    window.show()
    app.processEvents()
    with JournalWriter.open(path, read_only=True) as journal:
        rows = model_order(list(journal.rows))
    window.on_session_opened({"path": str(path), "id": "bench", "cwd": "/bench", "rows": rows})
    window.set_show_hidden(True)
    _settle(app, window)
    bar = window.view.verticalScrollBar()
    viewport = window.view.viewport()
    bar.setValue(0)
    app.processEvents()
    frames: list[float] = []
    start = time.perf_counter()
    value = 0
    while True:
        frame = time.perf_counter()
        bar.setValue(value)
        viewport.repaint()
        frames.append(time.perf_counter() - frame)
        if value >= bar.maximum():
            break
        value = min(bar.maximum(), value + bar.pageStep())
    total = time.perf_counter() - start
    frames.sort()
    return {
        "seconds": total,
        "pages": len(frames),
        "rows": window.filter.rowCount(),
        "max_frame_ms": frames[-1] * 1000,
        "p50_frame_ms": frames[len(frames) // 2] * 1000,
        "p99_frame_ms": frames[int(len(frames) * 0.99)] * 1000,
        "peak_mb": peak_mb(),
    }


PHASES = {
    "baseline": phase_baseline,
    "qt-empty": phase_qt_empty,
    "open": phase_open,
    "stall": phase_stall,
    "scroll": phase_scroll,
}


def run_phase(name: str, path: Path) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), QT_QPA_PLATFORM="offscreen")
    out = subprocess.run(
        [sys.executable, __file__, "--phase", name, "--file", str(path)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--phase", choices=sorted(PHASES), help=argparse.SUPPRESS)
    parser.add_argument("--file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        sys.path.insert(0, str(ROOT))
        print(json.dumps(PHASES[args.phase](Path(args.file))))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.jsonl"
        start = time.perf_counter()
        make_session(path, args.rows)
        size = path.stat().st_size
        print(
            f"session: {args.rows:,} rows, {size / 1e6:.1f} MB (written in {time.perf_counter() - start:.1f}s)"
        )
        results = {name: run_phase(name, path) for name in PHASES}
    base = results["baseline"]
    print()
    print("| phase | time | time vs bare parse | peak RSS | RSS vs bare parse | notes |")
    print("|---|---:|---:|---:|---:|---|")
    for name, r in results.items():
        ratio = f"{r['seconds'] / base['seconds']:.2f}×" if name not in ("scroll", "stall") else "—"
        memory = f"{r['peak_mb'] / base['peak_mb']:.2f}×"
        notes = ""
        if name == "open":
            notes = (
                f"journal read {r['read_seconds'] * 1000:.0f} ms, model + filter {r['model_seconds'] * 1000:.0f} ms, "
                f"paint {r['paint_seconds'] * 1000:.0f} ms; {r['visible_rows']:,} visible rows"
            )
        elif name == "scroll":
            notes = (
                f"{r['pages']:,} pages over {r['rows']:,} rows; frame p50 {r['p50_frame_ms']:.1f} ms, "
                f"p99 {r['p99_frame_ms']:.1f} ms, max {r['max_frame_ms']:.1f} ms"
            )
        elif name == "stall":
            notes = (
                f"longest GUI event-loop gap: opening {r['worst_open_ms']:.0f} ms, showing hidden rows "
                f"{r['worst_show_ms']:.0f} ms, hiding them {r['worst_hide_ms']:.0f} ms (target: under 50 ms)"
            )
        elif name == "baseline":
            notes = f"{r['rows']:,} rows parsed"
        print(
            f"| {name} | {r['seconds'] * 1000:,.0f} ms | {ratio} | {r['peak_mb']:,.0f} MB | {memory} | {notes} |"
        )
    if args.json:
        Path(args.json).write_text(
            json.dumps({"rows": args.rows, "bytes": size, "results": results}, indent=2)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
