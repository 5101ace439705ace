"""Conversation mode costs a screenful, whatever the session's length (design X4).

Run from the repository root (offscreen, no display needed)::

    PYTHONPATH=$PWD QT_QPA_PLATFORM=offscreen python benchmarks/conversation_bench.py [--rows 100000] [--rounds 9]

The window (1280x800, worker never started) opens a synthetic session with Markdown answers,
code, tool calls and tool output, turns the Message tab's conversation mode on, and jumps the
timeline to a position; the measurement is one jump as a user makes it: the scroll, then the
conversation's render of the rows on screen (cache cleared each time, so every row is converted
again). The anchor is the same jump in a 1,000-row session, in the same process, interleaved
round by round through ``_bench.compare`` (one jump each first, uncounted); wall time (the
repaint is the user's wait), min and median of ``--rounds``; budget 1.5x.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import compare, report, wall_ms

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
    from desktop.ui.messages import DecodedRows, SessionOpened, ShownSession
    from desktop.ui.worker import SessionWorker, WorkerClient

    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    app = QApplication(sys.argv[:1])
    QCoreApplication.setOrganizationName("pi-desktop-bench")

    def window_with(count: int) -> MainWindow:
        worker = SessionWorker()
        window = MainWindow(worker, WorkerClient(worker))
        window.resize(1280, 800)
        window.show()
        shown = ShownSession(f"/bench/{count}.jsonl", "/bench")
        window.on_session_opened(SessionOpened(shown, DecodedRows(rows(count))))
        while window.view.verticalScrollBar().maximum() < 100:  # batched layout finished enough
            app.processEvents()
        window.message_view.conversation.setChecked(True)
        app.processEvents()
        return window

    def jumps(window: MainWindow) -> Callable[[], float]:
        """One jump of ``window`` a round, each to the next of ``--rounds`` evenly spaced places."""
        done = itertools.count(1)

        def jump() -> float:
            count = window.shown.rowCount()
            target = window.shown.index((count * next(done)) // (args.rounds + 2), 0)
            window.message_view._cache.clear()

            def show() -> None:
                window.view.scrollTo(target, QAbstractItemView.ScrollHint.PositionAtTop)
                window._sync_conversation()
                app.processEvents()

            elapsed = wall_ms(show)
            assert window.message_view.rows and len(window.message_view.rows) < 120
            return elapsed

        return jump

    big, anchor = window_with(args.rows), window_with(1_000)
    times = compare({"big": jumps(big), "anchor": jumps(anchor)}, args.rounds)
    report(
        f"conversation mode: one jump in {args.rows:,} rows ({len(big.message_view.rows)} rendered)",
        times["big"],
        times["anchor"],
        anchor_name="the same in 1,000 rows",
        unit="ms wall",
        budget=1.5,
    )
    big.close()
    anchor.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
