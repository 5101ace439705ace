"""Screenshots of the inspector's views for other agents' sessions and costs (design X1, X3, G4).

A pi session with its branch switcher open, a Claude Code transcript with its reminders and
usage, the session browser, the "What if" tab, and the Payload tab's cache view with the
composer's draft, at one window size per run. Run under a virtual X server::

    xvfb-run -a -s "-screen 0 1280x800x24" env QT_QPA_PLATFORM=xcb PYTHONPATH=$PWD \\
        python scripts/screenshots_inspect.py docs/screenshots --size 1280x800
    xvfb-run -a -s "-screen 0 1920x1080x24" env QT_QPA_PLATFORM=xcb PYTHONPATH=$PWD \\
        python scripts/screenshots_inspect.py docs/screenshots --size 1920x1080

The sessions are the test fixtures (written by pi's own session manager, and Claude Code
transcripts written from the documented format), copied into a throwaway home folder, so the
script never reads real sessions or settings.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

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
    for name in ("PI_CODING_AGENT_DIR", "CLAUDE_CONFIG_DIR"):
        os.environ.pop(name, None)
    pi_dir = home / ".pi/agent/sessions/--home-dev-projects-demo--"
    claude_dir = home / ".claude/projects/-home-dev-projects-demo"
    pi_dir.mkdir(parents=True)
    claude_dir.mkdir(parents=True)
    pi_branches = pi_dir / "2026-12-01T09-00-00-000Z_branches.jsonl"
    pi_compaction = pi_dir / "2026-12-01T10-30-00-000Z_compaction.jsonl"
    claude = claude_dir / "a0000000-basic.jsonl"
    shutil.copy(FIXTURES / "pi_sessions/v3_branches.jsonl", pi_branches)
    shutil.copy(FIXTURES / "pi_sessions/v3_compaction.jsonl", pi_compaction)
    shutil.copy(FIXTURES / "claude_code/basic.jsonl", claude)
    shutil.copy(FIXTURES / "claude_code/compact.jsonl", claude_dir / "c0000000-compact.jsonl")

    from _shots import ShotWindow

    from desktop.ui.main_window import TAB_PAYLOAD, TAB_USAGE
    from desktop.ui.timeline_model import ROW_ROLE

    shots = ShotWindow(data, args.out, width, height, data_dir=str(data), workspace=str(home))
    window, client = shots.window, shots.client
    window.splitter.setSizes([width * 52 // 100, width * 48 // 100])
    pump, wait = shots.pump, shots.wait

    def shot(name: str) -> None:
        shots.shot(f"{name}-{width}x{height}.png")

    def shown(path: Path) -> bool:
        return getattr(window.session, "path", None) == str(path)

    def select(predicate: Any) -> None:
        f = window.shown  # the view's own model (a proxy over the filter)
        for i in range(f.rowCount()):
            if predicate(f.index(i, 0).data(ROW_ROLE)):
                window.view.setCurrentIndex(f.index(i, 0))
                window.view.scrollTo(f.index(i, 0))
                return

    client.start.emit({"route": "emulator/anthropic/claude-opus-5-5", "firstRun": False, "session": ""})
    wait(lambda: window.session is not None and bool(window.status.route_key))

    # A pi session: the branch switcher open over the timeline, a system row's section diff.
    client.open_session.emit(str(pi_branches))
    wait(lambda: shown(pi_branches))
    window.set_show_hidden(True)
    select(lambda row: row.get("foreign") == "system")
    pump(0.3)
    window.inspect.bar.branches.showPopup()
    shot("pi-session-branches")
    window.inspect.bar.branches.hidePopup()

    # The session browser, then a Claude Code transcript with its reminders and usage.
    window.browse_action.trigger()
    browser = window.inspect.browser
    assert browser is not None
    wait(lambda: len(browser.session_paths()) >= 4)  # and Pi Desktop's own sessions
    browser.move(window.geometry().center() - browser.rect().center())
    shot("session-browser")
    browser.reject()
    client.open_session.emit(str(claude))
    wait(lambda: shown(claude))
    select(lambda row: row.get("foreign") == "reminder")
    window.tabs.setCurrentIndex(TAB_USAGE)
    shot("claude-code-session")

    # What if: the pi session with a compaction replayed onto three routes.
    client.open_session.emit(str(pi_compaction))
    wait(lambda: shown(pi_compaction))
    window.tabs.setCurrentIndex(window.inspect.whatif_index)
    wait(lambda: window.inspect.whatif.result.get("session") == str(pi_compaction))
    shot("whatif")

    # The Payload tab's cache view: a Desktop session after two turns, with a draft typed.
    window.new_action.setEnabled(True)
    client.new_session.emit(str(home))
    wait(lambda: bool(window.session) and "foreign" not in window.session)
    for text in ("List the files and read README.md", "Now summarize what you found"):
        done = len(window.turn_results)
        window.composer.editor.setPlainText(text)
        window.composer.submit()
        wait(lambda d=done: len(window.turn_results) > d)
    window.tabs.setCurrentIndex(TAB_PAYLOAD)
    window.composer.editor.setPlainText("And what does the src folder hold?")
    wait(lambda: (window.payload_view.main.preview.get("draft") or "").startswith("And what"))
    wait(lambda: "check" in window.payload_view.main.preview)
    window.payload_view.main.jump_to_break()
    shot("payload-cache-view")

    window.close()
    shots.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
