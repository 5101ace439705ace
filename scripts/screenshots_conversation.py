"""Screenshots of the conversation-first window (design X6, X7) at one window size per run.

A first session answered in the conversation pane (the keyboard already in the composer), a
slash command's note, the Usage and What-if tabs of a Claude Code transcript. Run under a
virtual X server::

    for size in 1280x800 1440x900 1920x1080; do
        xvfb-run -a -s "-screen 0 ${size}x24" env QT_QPA_PLATFORM=xcb PYTHONPATH=$PWD \\
            python scripts/screenshots_conversation.py docs/screenshots --size $size
    done
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--size", default="1280x800", help="window size WIDTHxHEIGHT (the screen's)")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    home = Path(tempfile.mkdtemp(prefix="pi-shots-home-"))
    data = home / "data"
    os.environ["HOME"] = str(home)
    os.environ["PI_DESKTOP_DATA_DIR"] = str(data)
    os.environ["PI_DESKTOP_OFFLINE"] = "1"
    workspace = home / "project"
    workspace.mkdir()
    claude = home / "claude-basic.jsonl"
    shutil.copy(FIXTURES / "claude_code/basic.jsonl", claude)

    from _shots import ShotWindow

    shots = ShotWindow(data, args.out, width, height, data_dir=str(data), workspace=str(workspace))
    window, client = shots.window, shots.client

    def shot(name: str) -> None:
        shots.shot(f"{name}-{width}x{height}.png")

    client.start.emit({"route": "emulator/deepseek/deepseek-flash", "firstRun": False, "session": ""})
    shots.wait(lambda: window.session is not None and bool(window.status.route_key))
    window.send("Explain what this project does, with a short example. [[words:220]]")
    shots.wait(lambda: len(window.turn_results) >= 1)
    window.composer.editor.setPlainText("/help")
    window.composer.submit()
    shots.pump(1.0)
    shot("conversation")

    window.open_path(claude)
    shots.wait(lambda: getattr(window.session, "path", None) == str(claude))
    shots.pump(1.0)
    window.tabs.setCurrentWidget(window.usage_view)
    shot("usage")
    whatif = window.inspect.whatif
    window.tabs.setCurrentWidget(whatif)
    shots.wait(lambda: whatif.table.rowCount() > 0)
    shot("whatif")
    window.close()
    shots.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
