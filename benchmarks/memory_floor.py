"""The least memory a window can hold a checked session in: a floor for ``open_bench``'s memory.

``open_bench`` measures ``pi-desktop PATH`` once the session is fully open: the process's
memory high-water mark in total, against the file's size. This script measures, each in a
fresh process, what any Qt window showing the same session must hold at the least, so that
figure can be read against a floor and not only against the file:

* ``qt-window``: a ``QApplication`` and a 1280x800 ``QMainWindow`` with a table view and a text
  view, shown and painted (offscreen), no session: Qt's own floor;
* ``qt-window + bytes``: the same window, its table over the session: the file read once and
  kept as its bytes (the lines the journal reader checked; the app reads rows from what it
  checked, never again from the file, which another process may change), one offset per row,
  a row decoded with ``orjson`` only when painted;
* ``qt-window + reader``: the same, the lines read by the app's own journal reader
  (``read_session``, which checks every line and keeps it as its bytes) instead of kept raw:
  the window plus the reader the engine uses, nothing else of the app.

Each prints the process's memory high-water mark (``VmHWM``) once the window has painted rows.

Run: ``PYTHONPATH=$PWD python benchmarks/memory_floor.py [--rows 100000] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import interleave, load_average, min_median, table

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("qt-window", "qt-window + bytes", "qt-window + reader")


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise LookupError(field)


def _child(kind: str, path: Path) -> dict[str, Any]:
    from array import array

    import orjson
    from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer
    from PySide6.QtWidgets import QApplication, QMainWindow, QPlainTextEdit, QSplitter, QTableView

    app = QApplication(["memory_floor"])
    data = b""
    starts = array("q", [0])
    if kind == "qt-window + bytes":
        data = path.read_bytes()
        position = 0
        while (end := data.find(b"\n", position)) >= 0:
            position = end + 1
            starts.append(position)
    elif kind == "qt-window + reader":
        from desktop.host.journal.reader import read_session

        rows = read_session(path).rows

    class Rows(QAbstractTableModel):
        def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
            if kind == "qt-window + reader":
                return len(rows)
            return len(starts) - 1

        def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
            return 2

        def data(self, index: QModelIndex | QPersistentModelIndex, role: int = 0) -> Any:
            if role != Qt.ItemDataRole.DisplayRole:
                return None
            row = (
                rows[index.row()]
                if kind == "qt-window + reader"
                else orjson.loads(data[starts[index.row()] : starts[index.row() + 1]])
            )
            return str(row.get("type")) if index.column() == 0 else str(row.get("id"))

    window = QMainWindow()
    split = QSplitter()
    view = QTableView()
    view.setModel(Rows())
    split.addWidget(view)
    split.addWidget(QPlainTextEdit())
    window.setCentralWidget(split)
    window.resize(1280, 800)
    window.show()
    view.scrollToBottom()
    QTimer.singleShot(200, app.quit)
    app.exec()
    return {"hwm_mb": _status_kb("VmHWM") / 1024}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.child, args.file)))
        return 0
    from open_bench import make_file

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "session.jsonl"
        make_file(path, args.rows)
        size_mb = path.stat().st_size / 1024 / 1024
        env = {"QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}

        def run(kind: str) -> float:
            argv = [sys.executable, __file__, "--child", kind, "--file", str(path)]
            out = subprocess.run(argv, env=env, check=True, capture_output=True, text=True).stdout
            return float(json.loads(out.splitlines()[-1])["hwm_mb"])

        print(
            f"memory floor, {args.rows:,} rows ({size_mb:.1f} MiB), {args.rounds} rounds, load {load_average()}"
        )
        times = interleave({kind: (lambda kind=kind: run(kind)) for kind in KINDS}, args.rounds)
        rows = []
        for kind in KINDS:
            low, mid = min_median(times[kind])
            rows.append([kind, f"{low:.1f} / {mid:.1f}", f"{low / size_mb:.2f} / {mid / size_mb:.2f}"])
        print(table(["process", "VmHWM MiB min / median", "over the file min / median"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
