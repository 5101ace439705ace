"""Conversation mode costs a screenful, whatever the session's length (design X4).

Run from the repository root (offscreen, no display needed)::

    PYTHONPATH=$PWD QT_QPA_PLATFORM=offscreen python benchmarks/conversation_bench.py [--rows 100000] [--rounds 9]

The window (1280x800, worker never started) opens a synthetic session with Markdown answers,
code, tool calls and tool output, turns the Message tab's conversation mode on, and jumps the
timeline to a position; the measurement is one jump as a user makes it: the scroll, then the
conversation's render of the rows on screen (cache cleared each time, so every row is converted
again). The anchor is the same jump in a 1,000-row session, in the same process, interleaved
round by round; min and median of ``--rounds``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

ANSWER = (
    "Here is what I found in `parser.py`:\n\n## Cause\n\nThe loop stops **one item early**.\n\n"
    "```python\nfor i in range(len(items) - 1):\n    total += items[i]\n```\n\n- fix the bound\n- add a test\n"
)


def rows(count: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    turn = 0
    while len(out) < count:
        ts = 1_700_000_000_000 + len(out)
        call = {
            "type": "toolCall",
            "id": f"c{turn}",
            "name": "bash",
            "arguments": {"command": f"pytest -k t{turn}"},
        }
        usage = {"input": 100, "output": 20, "cacheRead": 900, "cacheWrite": 0, "cost": {"total": 0.00056}}
        out += [
            {
                "type": "user",
                "v": 1,
                "id": f"u{turn}",
                "ts": ts,
                "message": {"role": "user", "content": f"Question {turn}: why?"},
            },
            {
                "type": "assistant",
                "v": 1,
                "id": f"a{turn}",
                "ts": ts,
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": ANSWER}, call],
                    "stopReason": "toolUse",
                    "usage": usage,
                    "model": "m",
                },
            },
            {
                "type": "toolResult",
                "v": 1,
                "id": f"t{turn}",
                "ts": ts,
                "message": {
                    "role": "toolResult",
                    "toolCallId": f"c{turn}",
                    "toolName": "bash",
                    "content": [{"type": "text", "text": "\n".join(f"test_{i} PASSED" for i in range(40))}],
                    "isError": False,
                },
            },
        ]
        turn += 1
    return out[:count]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))

    from PySide6.QtCore import QCoreApplication, QSettings
    from PySide6.QtWidgets import QAbstractItemView, QApplication

    from desktop.ui.main_window import MainWindow
    from desktop.ui.worker import SessionWorker, WorkerClient

    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    app = QApplication(sys.argv[:1])
    QCoreApplication.setOrganizationName("pi-desktop-bench")

    def window_with(count: int) -> MainWindow:
        worker = SessionWorker()
        window = MainWindow(worker, WorkerClient(worker))
        window.resize(1280, 800)
        window.show()
        window.on_session_opened({"path": f"/bench/{count}.jsonl", "cwd": "/bench", "rows": rows(count)})
        while window.view.verticalScrollBar().maximum() < 100:  # batched layout finished enough
            app.processEvents()
        window.message_view.conversation.setChecked(True)
        app.processEvents()
        return window

    big, anchor = window_with(args.rows), window_with(1_000)
    times: dict[str, list[float]] = {"big": [], "anchor": []}
    for round_ in range(args.rounds):
        for name, window in (("big", big), ("anchor", anchor)):
            count = window.shown.rowCount()
            target = window.shown.index((count * (round_ + 1)) // (args.rounds + 1), 0)
            window.message_view._cache.clear()
            started = time.perf_counter()
            window.view.scrollTo(target, QAbstractItemView.ScrollHint.PositionAtTop)
            window._sync_conversation()
            app.processEvents()
            times[name].append((time.perf_counter() - started) * 1000)
            assert window.message_view.rows and len(window.message_view.rows) < 120
    print(f"{'':24} {'min ms':>8} {'median ms':>10}")
    for name, label in (("big", f"{args.rows:,} rows"), ("anchor", "1,000 rows (anchor)")):
        print(f"{label:24} {min(times[name]):8.1f} {statistics.median(times[name]):10.1f}")
    ratio_min = min(times["big"]) / min(times["anchor"])
    ratio_median = statistics.median(times["big"]) / statistics.median(times["anchor"])
    print(f"{'ratio':24} {ratio_min:7.2f}x {ratio_median:9.2f}x")
    print(f"rendered per jump: {len(big.message_view.rows)} rows")
    big.close()
    anchor.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
