"""Screenshots of the readable window (design G7, X4) at one screen size, on the offline emulator.

Writes ``message-WxH.png`` (a conversation rendered: Markdown, code, an edit as a diff, tool
output), ``help-WxH.png`` (Help → What am I looking at?), ``error-banner-WxH.png`` (a file that
cannot be opened) and ``compaction-preview-WxH.png`` (the Compact confirmation). Run under a
virtual X server as large as the size, so the whole screen is the window::

    for size in 1280x800 1440x900 1920x1080; do
      xvfb-run -a -s "-screen 0 ${size}x24" env QT_QPA_PLATFORM=xcb PYTHONPATH=$PWD \\
        .venv/bin/python scripts/screenshots_readable.py docs/screenshots --size $size
    done

It uses a throwaway data folder and workspace, so it never touches real sessions or settings.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

ANSWER = (
    "Here is the plan. [[think]]\n\n"
    "## Plan\n\n"
    "1. **Read** `totals.py` and find the off-by-one\n"
    "2. Fix the loop, then run the tests\n\n"
    "```python\n"
    "def total(prices: list[float]) -> float:\n"
    "    return sum(prices)\n"
    "```\n"
)
EDIT = (
    'Fix it. [[tool:edit {"path": "totals.py", "edits": [{"oldText": "    for i in range(len(prices) - 1):\\n'
    '        result += prices[i]", "newText": "    for price in prices:\\n        result += price"}]}]]'
)
LIST = 'And show the folder. [[tool:bash {"command": "ls -la && wc -l totals.py"}]]'


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--size", default="1280x800", help="WIDTHxHEIGHT of the window and the shots")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    data = Path(tempfile.mkdtemp(prefix="pi-shots-"))
    workspace = data / "shop"
    workspace.mkdir()
    (workspace / "totals.py").write_text(
        "def total(prices):\n    result = 0\n    for i in range(len(prices) - 1):\n"
        "        result += prices[i]\n    return result\n",
        encoding="utf-8",
    )
    os.environ["PI_DESKTOP_DATA_DIR"] = str(data)
    os.environ["PI_DESKTOP_OFFLINE"] = "1"

    from _shots import ShotWindow
    from PySide6.QtWidgets import QAbstractItemView, QMessageBox

    from desktop.ui.main_window import TAB_MESSAGE

    shots = ShotWindow(data, args.out, width, height, workspace=str(workspace))
    window, client = shots.window, shots.client
    pump, wait = shots.pump, shots.wait

    def shot(name: str) -> None:
        shots.shot(f"{name}-{width}x{height}.png")

    def send(text: str, turns: int) -> None:
        window.composer.editor.setPlainText(text)
        window.composer.submit()
        wait(lambda: len(window.turn_results) >= turns)

    client.start.emit({"firstRun": False, "mode": "accept-edits", "fallback": "folded"})
    wait(lambda: bool(window.session))
    send(ANSWER, 1)
    send(EDIT, 2)
    window.mode_combo.setCurrentText("full-access")
    client.set_mode.emit("full-access")
    send(LIST, 3)
    pump(0.5)

    # The transcript, rendered: the conversation follows the timeline; thinking opened once.
    window.tabs.setCurrentIndex(TAB_MESSAGE)
    last = window.shown.index(window.shown.rowCount() - 1, 0)
    window.view.setCurrentIndex(last)
    window.message_view.conversation.setChecked(True)
    # The edit's turn at the top: its call as a diff, then the tool's output.
    rows = [window.shown.index(i, 0) for i in range(window.shown.rowCount())]
    edit_turn = next(i for i, index in enumerate(rows) if "Fix it." in str(index.data()))
    window.view.scrollTo(rows[edit_turn], QAbstractItemView.ScrollHint.PositionAtTop)
    window.view.setCurrentIndex(rows[edit_turn + 1])  # the transcript scrolls to the selected row
    shot("message")

    # The compaction preview: what the button will do, before anything is sent. Below the keep
    # budget there is nothing to compact yet, so one long answer first.
    send("Write up the design notes. [[words:16000]]", 4)
    wait(lambda: window.compaction_preview is not None and window.compaction_preview.possible)
    window.compact_button.click()
    box = window.compact_confirm
    assert box is not None
    box.adjustSize()
    box.move(window.geometry().center() - box.rect().center())
    shot("compaction-preview")
    button = box.button(QMessageBox.StandardButton.Yes)
    assert button is not None
    button.click()
    wait(lambda: len(window.turn_results) >= 5)

    # An error where the user looks: a session file with invalid bytes and a stray line.
    broken = data / "broken.jsonl"
    broken.write_bytes(b'{"type": "event", "v": 1, "note": "caf\xe9 \xff"}\n')
    client.open_session.emit(str(broken))
    wait(lambda: bool(window.banners.banners))
    window.message_view.conversation.setChecked(False)
    window.view.setCurrentIndex(window.shown.index(window.shown.rowCount() - 1, 0))
    shot("error-banner")

    # Help → What am I looking at?
    window.show_help()
    page = window.help_page
    assert page is not None
    page.resize(min(820, width - 80), height - 120)
    page.move(window.geometry().center() - page.rect().center())
    shot("help")

    window.close()
    shots.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
