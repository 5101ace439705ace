"""Regenerate the README screenshots: the guided first session on the offline emulator.

Run under a virtual X server (the shots include dialogs, so the whole screen is grabbed)::

    Xvfb :99 -screen 0 1440x900x24 &
    DISPLAY=:99 QT_QPA_PLATFORM=xcb PYTHONPATH=$PWD python scripts/screenshots.py docs/screenshots
    DISPLAY=:99 QT_QPA_PLATFORM=xcb PI_DESKTOP_THEME=dark PYTHONPATH=$PWD python scripts/screenshots.py docs/screenshots --dark

It uses a throwaway data folder, so it never touches real sessions or settings.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--dark", action="store_true", help="only the dark main view")
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="pi-shots-"))
    os.environ["PI_DESKTOP_DATA_DIR"] = str(data)
    os.environ["PI_DESKTOP_OFFLINE"] = "1"
    if args.dark:
        os.environ["PI_DESKTOP_THEME"] = "dark"

    from _shots import ShotWindow
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QMessageBox

    from desktop.ui.main_window import TAB_ACTIVATION, TAB_DIFF, TAB_PAYLOAD, TAB_USAGE
    from desktop.ui.timeline_model import ROW_ROLE

    shots = ShotWindow(data, args.out, 1440, 900, workspace=str(data))
    window, client = shots.window, shots.client
    window.splitter.setSizes([700, 740])
    pump, wait = shots.pump, shots.wait

    def shot(name: str) -> None:
        shots.shot(name, settle=0.4)

    def select(row_id: str) -> None:
        for i in range(window.shown.rowCount()):
            if window.shown.index(i, 0).data(ROW_ROLE)["id"] == row_id:
                window.view.setCurrentIndex(window.shown.index(i, 0))
                window.view.scrollTo(window.shown.index(i, 0))
                return

    client.start.emit({"firstRun": True, "mode": "ask", "fallback": "folded"})
    wait(lambda: len(window.turn_results) >= 2)
    window.set_show_hidden(True)
    systems = [r for r in window.timeline.rows if r.get("type") == "system"]
    changed = next(
        (r for r in reversed(systems) if "guidance" in (r["modelSystem"]["message"].get("sections") or {})),
        systems[-1],
    )
    select(changed["id"])
    if args.dark:
        shot("main-dark.png")
        shots.close()
        return 0
    shot("main-section-diff.png")

    window.tabs.setCurrentIndex(TAB_ACTIVATION)
    shot("activation.png")

    window.tabs.setCurrentIndex(TAB_PAYLOAD)  # previews are computed while the tab is shown
    wait(lambda: bool(window.payload_view.main.preview))
    pump(0.3)
    window.payload_view.main.jump_to_break()
    shot("payload.png")

    compare = window.payload_view.compare_combo
    for i in range(compare.count()):
        if "claude-sonnet-5" in compare.itemText(i):
            compare.setCurrentIndex(i)
            compare.activated.emit(i)
            break
    wait(lambda: bool(window.payload_view.compare.preview))
    window.payload_view.compare.jump_to_break()
    shot("payload-compare.png")
    compare.setCurrentIndex(0)
    compare.activated.emit(0)

    window.tabs.setCurrentIndex(TAB_USAGE)
    shot("usage.png")

    window.composer.editor.setPlainText('Run the tests. [[tool:bash {"command": "echo 3 passed"}]]')
    window.composer.submit()
    wait(lambda: bool(window.permission_dialogs))
    dialog = window.permission_dialogs[0]
    dialog.move(window.geometry().center() - dialog.rect().center())
    shot("permission.png")
    dialog.allow_button.click()
    wait(lambda: len(window.turn_results) >= 3)

    # Below the keep budget there is nothing to compact yet: one long answer first.
    window.composer.editor.setPlainText("Write up the design notes. [[words:16000]]")
    window.composer.submit()
    wait(lambda: len(window.turn_results) >= 4)
    wait(lambda: window.compaction_preview is not None and window.compaction_preview.possible)
    window.compact_button.click()  # asks first, with the preview (design C1)
    assert window.compact_confirm is not None
    window.compact_confirm.button(QMessageBox.StandardButton.Yes).click()
    wait(lambda: len(window.turn_results) >= 5)
    window.view.setCurrentIndex(window.shown.index(window.shown.rowCount() - 1, 0))
    window.tabs.setCurrentIndex(TAB_DIFF)
    window.view.scrollToBottom()
    shot("compaction.png")
    window.close()
    shots.close()
    del Qt
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
