"""The worker's operations for foreign sessions and the what-if replay (design X1, X2, X3).

Plain functions the worker thread calls (no Qt, no signals): each takes what the worker holds
and returns the plain dict the window is sent. They read files (a session, the folders the
browser lists) and write one (a fork), so they never run on the GUI thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from desktop.session.foreign import ForeignSession

DEFAULT_WHATIF_ROUTES = ("anthropic/claude-opus-5-5", "deepseek/deepseek-flash", "openai/gpt-5.5")


def file_format(path: Path) -> tuple[str, str]:
    """(format, description) of a file by its content: desktop, pi, claude-code or unknown."""
    from desktop.session.foreign import detect_format

    detected = detect_format(path)
    return detected.format, detected.description


def open_foreign_info(path: Path, leaf: str | None = None) -> tuple[ForeignSession, dict[str, Any]]:
    """Open a pi or Claude Code session read-only and describe it for the window (X1).

    Raises ``ForeignOpenError`` whose text is the one line to show (unknown format).
    """
    from desktop.session.foreign import open_foreign
    from desktop.session.foreign.display import opened_info

    session = open_foreign(path)
    return session, opened_info(session, leaf)


def branch_info(session: ForeignSession, leaf: str) -> dict[str, Any]:
    """The same session shown at another branch (the branch switcher)."""
    from desktop.session.foreign.display import opened_info

    return opened_info(session, leaf)


def fork(session: ForeignSession, leaf: str | None, workspace: Path | None, data_dir: str | None) -> Path:
    """Continue the session in Pi Desktop (X2): the new session's path; the source is untouched."""
    from desktop.session.foreign import fork_to_desktop

    cwd = Path(session.cwd) if session.cwd and Path(session.cwd).is_dir() else workspace
    return fork_to_desktop(session, leaf=leaf, workspace=cwd, data_dir=data_dir)


def browse_listing(home: Path | None = None) -> dict[str, Any]:
    """The session browser's data: workspaces and sessions under the pi and Claude Code folders."""
    from desktop.host.foreign.browser import claude_projects_root, pi_sessions_root
    from desktop.session.foreign import browse
    from desktop.ui.session_browser import browse_rows

    return {
        "workspaces": browse_rows(browse(home=home)),
        "roots": [str(pi_sessions_root(home)), str(claude_projects_root(home))],
    }


def whatif(path: Path, routes: list[str], leaf: str | None = None) -> dict[str, Any]:
    """The what-if replay of the session at ``path`` onto ``routes`` (X3), or ``{"error": ...}``."""
    from desktop.pi.catalog import RouteError
    from desktop.session.foreign import BranchNotFound, ForeignOpenError
    from desktop.session.whatif import request_sequence, what_if

    try:
        result = what_if(request_sequence(path, leaf=leaf), routes).to_json()
    except (RouteError, BranchNotFound, ForeignOpenError, OSError, ValueError) as exc:
        return {"error": str(exc), "routes": routes}
    result["leaf"] = leaf
    return result
