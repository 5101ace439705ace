"""What the window shows and decides when a session file is opened from outside (design G8).

Pure helpers, no widgets: the title that names the open session (so a dock, a task switcher
and ``xdotool search --name`` can tell windows apart), and whether a requested file is the
session already showing (then the window only comes to the front).
"""

from __future__ import annotations

import os
from pathlib import Path

APP_TITLE = "Pi Desktop"


def window_title(path: str, workspace: str) -> str:
    """``<file> · <workspace> — Pi Desktop``; just the app name while nothing is open."""
    if not path:
        return APP_TITLE
    name = Path(path).name
    folder = Path(workspace).name if workspace else ""
    return f"{name} · {folder} — {APP_TITLE}" if folder else f"{name} — {APP_TITLE}"


def app_part(title: str) -> str:
    """The application's part of a window title (what the self-test line reports)."""
    return title.rsplit(" — ", 1)[-1]


def same_file(first: str, second: str) -> bool:
    """Both name one file (a symlink, a relative path or another spelling of the same file)."""
    if not first or not second:
        return False
    try:
        return os.path.samefile(first, second)
    except OSError:
        return os.path.normcase(os.path.abspath(first)) == os.path.normcase(os.path.abspath(second))
