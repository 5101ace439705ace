"""Open a 100,000-row session the way a user does, with a stall probe running (design G9, X26, X27).

Run from the repository root (offscreen, no display needed)::

    PYTHONPATH=$PWD python benchmarks/open_bench.py [--rows 100000] [--rounds 3] [--json out.json]

Each measurement runs in a fresh subprocess (its CPU and peak memory are its own), on compiled
bytecode as an installed app runs, and the sides are interleaved round by round
(``_bench.interleave``); the report gives min and median of each.

The headline, the user's whole wait, start-up included:

* ``launch``: ``pi-desktop PATH`` through the application's own entry point in a fresh process;
  the process CPU (all threads) and wall time from the spawn until the timeline first paints
  rows, and the process's memory high-water mark in total at that paint and once the session is
  fully open and the worker has settled (everything the open queued has run);
* its anchor at its best, ``parse-gc-off``: a fresh Python process that parses every line of
  the file with ``orjson.loads``, cyclic collector off (the app's readers turn it off), its whole
  process CPU and memory high-water mark.
  Targets: launch CPU ``<= 2x`` the anchor's, memory once fully open ``<= 3x`` the file.

Inside a running app (File → Open), with a 5 ms ``QTimer`` probe recording every gap in the GUI
event loop from the pick on:

* ``open``: a ``QApplication``, the worker thread from ``start_worker``, the ``MainWindow``; an
  empty session is open first, then the user "picks" the file (``client.open_session``). Time
  to the timeline's first paint with rows and the longest stall until then (target ``<= 50
  ms``), the time until the session is fully open and the longest stall until then, and the
  memory high-water mark above the resident memory at the pick (``/proc/self/clear_refs``
  resets the mark); ratios against ``parse`` (collector on) and ``parse-gc-off``.
"""

from __future__ import annotations

import argparse
import compileall
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from _bench import interleave, load_average, min_median, ratio  # noqa: E402


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def phase_parse(path: Path, gc_off: bool) -> dict[str, Any]:
    import gc

    import orjson

    if gc_off:
        gc.disable()
    start = time.perf_counter()
    with open(path, "rb") as handle:
        rows = [orjson.loads(line) for line in handle]
    return {
        "seconds": time.perf_counter() - start,
        "rows": len(rows) - 1,
        # The whole process, start-up included, for the launch's anchor.
        "process_cpu": time.process_time(),
        "at": time.time(),
        "hwm_mb": _status_kb("VmHWM") / 1024,
    }


def phase_launch(path: Path, work: Path) -> dict[str, Any]:
    """``pi-desktop PATH`` in this fresh process, through the application's own entry point;
    a probe in the window notes when the timeline first paints rows (CPU and clock) and the
    memory high-water mark once the session is open and the worker has settled, then quits."""
    # As ``open_window`` does before the first Qt module: the probe below loads the window's
    # modules before the entry point would, so it takes the same step first.
    from desktop.ui.pyside_features import skip_source_scan

    skip_source_scan()
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QApplication

    import desktop.ui.launch as launch
    from desktop.app import main as app_main

    marks: dict[str, Any] = {}
    window_class = launch.MainWindow

    class Probe(QObject):
        def __init__(self, window: Any) -> None:
            super().__init__(window)
            self.window = window

        def eventFilter(self, _obj: Any, event: Any) -> bool:
            if (
                event.type() == QEvent.Type.Paint
                and "paint" not in marks
                and self.window.timeline.rowCount() > 100
            ):
                marks["paint"] = time.time()
                marks["paint_cpu"] = time.process_time()
                marks["paint_hwm_mb"] = _status_kb("VmHWM") / 1024
            return False

    class Window(window_class):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._bench_probe = Probe(self)
            self.view.viewport().installEventFilter(self._bench_probe)
            self.worker.session_opened.connect(self._bench_opened)

        def _bench_opened(self, _info: Any) -> None:
            marks["opened"] = time.time()
            # Settled: a query posted now runs after everything the open queued.
            self.client.ops.query(lambda _worker: None, lambda _none: self._bench_settled())

        def _bench_settled(self) -> None:
            def done() -> None:
                if "paint" not in marks:
                    QTimer.singleShot(20, done)
                    return
                marks["settled"] = time.time()
                marks["settled_cpu"] = time.process_time()
                marks["settled_hwm_mb"] = _status_kb("VmHWM") / 1024
                app = QApplication.instance()
                assert app is not None
                app.quit()

            QTimer.singleShot(0, done)

    launch.MainWindow = Window
    app_main([str(path), "--data-dir", str(work / "data")])
    return marks


def phase_open(path: Path, work: Path) -> dict[str, Any]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEvent, QEventLoop, QObject, QSettings, QTimer, Slot
    from PySide6.QtWidgets import QApplication

    from desktop.ui.main_window import MainWindow
    from desktop.ui.worker import start_worker, stop_worker

    app = QApplication.instance() or QApplication([])
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(work / "qsettings"))
    workspace = work / "workspace"
    workspace.mkdir(exist_ok=True)
    thread, worker, client = start_worker(data_dir=str(work / "data"), workspace=str(workspace))
    window = MainWindow(worker, client)
    window.resize(1280, 800)
    window.show()

    def wait_for(done: Any, seconds: float) -> None:
        """Run the event loop as the app does (``exec``: asleep until an event comes) until
        ``done()``: a loop of ``processEvents`` would keep this thread busy and take the GIL
        from the worker every switch interval, slowing the open it measures."""
        loop = QEventLoop()
        check = QTimer()
        check.setInterval(5)
        check.timeout.connect(lambda: loop.quit() if done() else None)
        QTimer.singleShot(int(seconds * 1000), loop.quit)
        check.start()
        if not done():
            loop.exec()
        check.stop()

    client.start.emit({"firstRun": False})
    wait_for(lambda: bool(window.session), 120)
    for _ in range(20):
        app.processEvents()

    marks: dict[str, float] = {}
    gaps: list[tuple[float, float]] = []

    class Paints(QObject):
        def eventFilter(self, _obj: Any, event: Any) -> bool:
            if event.type() == QEvent.Type.Paint:
                now = time.perf_counter()
                if "paint" not in marks and window.timeline.rowCount() > 100:
                    marks["paint"] = now
                    marks["paint_hwm_kb"] = _status_kb("VmHWM")
                if "opened" in marks and "ready" not in marks:
                    marks["ready"] = now
            return False

    paints = Paints()
    window.view.viewport().installEventFilter(paints)
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append((now, now - last[0]))
        last[0] = now

    probe = QTimer()
    probe.setInterval(5)
    probe.timeout.connect(tick)

    class Marks(QObject):
        """Lives on the GUI thread, so the worker's signals reach it queued, after the window's."""

        @Slot(object)
        def indexed(self, _info: Any) -> None:
            marks["indexed_done"] = time.perf_counter()

        @Slot(object)
        def opened(self, _info: Any) -> None:
            marks["opened"] = time.perf_counter()
            window.view.viewport().update()

    recorder = Marks()
    worker.session_indexed.connect(recorder.indexed)
    worker.session_opened.connect(recorder.opened)
    probe.start()
    app.processEvents()
    rss_before = _status_kb("VmRSS")
    peak_reset = _reset_peak()
    last[0] = pick = time.perf_counter()
    client.open_session.emit(str(path))  # what File → Open emits once the user picked the file
    wait_for(lambda: "ready" in marks, 300)
    end = time.perf_counter()
    ready_hwm = _status_kb("VmHWM")
    # Settled: the worker has done everything the open queued (status, activation, previews of
    # a shown Payload tab): a query posted now runs after all of it.
    client.ops.query(lambda _worker: None, lambda _none: marks.setdefault("settled", time.perf_counter()))
    wait_for(lambda: "settled" in marks, 300)
    probe.stop()
    hwm = _status_kb("VmHWM")
    window.close()
    stop_worker(thread, worker, client)

    def worst(until: float) -> float:
        return max((gap for at, gap in gaps if pick < at <= until + 0.005), default=end - pick)

    paint = marks.get("paint", end)
    ready = marks.get("ready", end)
    return {
        "first_paint": paint - pick,
        "stall_to_paint": worst(paint),
        "indexed": marks.get("indexed_done", end) - pick,
        "ready": ready - pick,
        "stall_to_ready": worst(ready),
        "ticks": len(gaps),
        "worst_gaps": sorted(
            ((round(at - pick, 3), round(gap, 3)) for at, gap in gaps if gap > 0.03), key=lambda g: -g[1]
        )[:8],
        "rows": window.timeline.rowCount(),
        "rss_before_mb": rss_before / 1024,
        "peak_reset": peak_reset,
        "peak_to_paint_mb": (marks.get("paint_hwm_kb", hwm) - rss_before) / 1024,
        "peak_to_ready_mb": (ready_hwm - rss_before) / 1024,
        "settled": marks.get("settled", end) - pick,
        "stall_to_settled": worst(marks.get("settled", end)),
        "peak_to_settled_mb": (hwm - rss_before) / 1024,
    }


def _child(phase: str, path: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    with tempfile.TemporaryDirectory() as work:
        spawned = time.time()
        out = subprocess.run(
            [sys.executable, __file__, "--phase", phase, "--file", str(path), "--work", work],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "spawned": spawned}


def _rounded(pair: tuple[float, float], digits: int = 2) -> dict[str, float]:
    return {"min": round(pair[0], digits), "median": round(pair[1], digits)}


def make_file(path: Path, rows: int) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    sys.path.insert(0, str(ROOT))
    from timeline_bench import make_session

    make_session(path, rows)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        if args.phase == "open":
            result = phase_open(args.file, args.work)
        elif args.phase == "launch":
            result = phase_launch(args.file, args.work)
        else:
            result = phase_parse(args.file, gc_off=args.phase == "parse-gc-off")
        print(json.dumps(result))
        return 0

    # An installed app has its modules' bytecode; a checkout compiles them on every start
    # (always, under PYTHONDONTWRITEBYTECODE): the measured processes read it as a user's do.
    compileall.compile_dir(str(ROOT / "desktop"), quiet=1)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "long.jsonl"
        make_file(path, args.rows)
        size_mb = path.stat().st_size / 2**20
        phases = ["parse", "parse-gc-off", "open", "launch"]
        runs = interleave({phase: functools.partial(_child, phase, path) for phase in phases}, args.rounds)
    for run in runs["launch"]:
        run["paint_wall"] = run["paint"] - run["spawned"]
    for run in runs["parse-gc-off"]:
        run["wall"] = run["at"] - run["spawned"]

    def stat(phase: str, key: str) -> tuple[float, float]:
        return min_median([run[key] for run in runs[phase]])

    parse = stat("parse", "seconds")
    parse_off = stat("parse-gc-off", "seconds")
    report: dict[str, Any] = {"rows": args.rows, "file_mb": round(size_mb, 1), "rounds": args.rounds}
    for key in ("first_paint", "stall_to_paint", "ready", "stall_to_ready", "settled", "stall_to_settled"):
        low, mid = stat("open", key)
        report[key] = {"min": round(low, 3), "median": round(mid, 3)}
    report["parse"] = {"min": round(parse[0], 3), "median": round(parse[1], 3)}
    report["parse_gc_off"] = {"min": round(parse_off[0], 3), "median": round(parse_off[1], 3)}
    paint = stat("open", "first_paint")
    report["first_paint_over_parse"] = {
        "min": round(paint[0] / parse[0], 2),
        "median": round(paint[1] / parse[1], 2),
    }
    report["first_paint_over_parse_gc_off"] = {
        "min": round(paint[0] / parse_off[0], 2),
        "median": round(paint[1] / parse_off[1], 2),
    }
    for key in ("peak_to_paint_mb", "peak_to_ready_mb", "peak_to_settled_mb"):
        low, mid = stat("open", key)
        report[key.replace("_mb", "_over_file")] = {
            "min": round(low / size_mb, 2),
            "median": round(mid / size_mb, 2),
        }
    # ``pi-desktop PATH`` from a fresh process against a fresh collector-off parse process:
    # process CPU (start-up included) to rows on screen, wall time from the spawn, and the
    # memory high-water mark in total once the session is open and the worker has settled.
    launch_cpu = [run["paint_cpu"] for run in runs["launch"]]
    parse_cpu = [run["process_cpu"] for run in runs["parse-gc-off"]]
    report["launch_cpu_over_parse_gc_off_process"] = _rounded(ratio(launch_cpu, parse_cpu))
    report["launch_cpu_s"] = _rounded(min_median(launch_cpu), 3)
    report["parse_gc_off_process_cpu_s"] = _rounded(min_median(parse_cpu), 3)
    report["launch_wall_over_parse_gc_off_wall"] = _rounded(
        ratio([run["paint_wall"] for run in runs["launch"]], [run["wall"] for run in runs["parse-gc-off"]])
    )
    report["launch_settled_memory_over_file"] = _rounded(
        tuple(v / size_mb for v in stat("launch", "settled_hwm_mb"))  # type: ignore[arg-type]
    )
    report["launch_paint_memory_over_file"] = _rounded(
        tuple(v / size_mb for v in stat("launch", "paint_hwm_mb"))  # type: ignore[arg-type]
    )
    report["parse_gc_off_memory_over_file"] = _rounded(
        tuple(v / size_mb for v in stat("parse-gc-off", "hwm_mb"))  # type: ignore[arg-type]
    )
    report["rss_before_mb"] = round(stat("open", "rss_before_mb")[1], 1)
    report["load"] = load_average()
    report["peak_reset"] = all(run["peak_reset"] for run in runs["open"])
    # The headline first: the fresh ``pi-desktop PATH`` process against its anchor at its best.
    first = ("rows", "file_mb", "rounds")
    headline = [key for key in report if key.startswith(("launch_", "parse_gc_off_"))]
    report = {**{key: report[key] for key in (*first, *headline)}, **report}
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
