"""Screenshots of other agents' files as found on machines (design X1, G4).

A Claude Code transcript with parallel tool calls (every result joined to its reply, one
branch), a Codex CLI rollout, and the session browser listing pi, Claude Code and Codex
sessions side by side. Run under a virtual X server::

    xvfb-run -a -s "-screen 0 1280x800x24" env QT_QPA_PLATFORM=xcb PYTHONPATH=$PWD \\
        python scripts/screenshots_formats.py docs/screenshots --size 1280x800

The sessions are the test fixtures (hand-written in each format, no private data), copied into
a throwaway home folder, so the script never reads real sessions or settings.
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
ROLLOUT = "rollout-2026-10-06T10-00-00-0199b1c2-7d4e-7a10-9c3f-2e5d8a6b4f01.jsonl"


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
    for name in ("PI_CODING_AGENT_DIR", "CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        os.environ.pop(name, None)
    pi_dir = home / ".pi/agent/sessions/--home-dev-projects-demo--"
    claude_dir = home / ".claude/projects/-home-dev-projects-shop"
    codex_dir = home / ".codex/sessions/2026/10/06"
    for folder in (pi_dir, claude_dir, codex_dir):
        folder.mkdir(parents=True)
    shutil.copy(
        FIXTURES / "pi_sessions/v3_branches.jsonl", pi_dir / "2026-12-01T09-00-00-000Z_branches.jsonl"
    )
    parallel = claude_dir / "5d1e7a42-parallel.jsonl"
    shutil.copy(FIXTURES / "claude_code/parallel.jsonl", parallel)
    shutil.copy(FIXTURES / "claude_code/legacy.jsonl", claude_dir / "e4000000-legacy.jsonl")
    rollout = codex_dir / ROLLOUT
    shutil.copy(FIXTURES / "codex" / ROLLOUT, rollout)

    from _shots import ShotWindow

    from desktop.ui.main_window import TAB_USAGE
    from desktop.ui.timeline_model import ROW_ROLE

    shots = ShotWindow(data, args.out, width, height, data_dir=str(data), workspace=str(home))
    window, client = shots.window, shots.client
    window.splitter.setSizes([width * 52 // 100, width * 48 // 100])
    wait = shots.wait

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

    window.browse_action.trigger()
    browser = window.inspect.browser
    assert browser is not None
    wait(lambda: len(browser.session_paths()) == 4)
    browser.move(window.geometry().center() - browser.rect().center())
    shot("session-browser-three-formats")
    browser.reject()

    # Parallel tool calls: the reply with its three calls, then the three results, one branch.
    client.open_session.emit(str(parallel))
    wait(lambda: shown(parallel))
    select(lambda row: row.get("foreign") == "tool")
    shot("claude-code-parallel-tools")

    # A Codex rollout: reasoning and parallel calls in one model call, usage from token counts.
    client.open_session.emit(str(rollout))
    wait(lambda: shown(rollout))
    select(lambda row: row.get("foreign") == "assistant")
    window.tabs.setCurrentIndex(TAB_USAGE)
    shot("codex-session")

    window.close()
    shots.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
