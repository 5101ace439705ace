"""Workspace confinement for the file tools: the Host's restriction, checked before any I/O.

Three escapes are refused, each with its own reason so the model can correct itself: a
relative path whose ``..`` parts climb out, an absolute (or ``~``) path outside the
workspace, and a path that stays inside lexically but resolves through a symlink to a
place outside. The symlink check resolves the deepest existing ancestor, so a path to a
file that does not exist yet (``write``) is checked too.
"""

from __future__ import annotations

import os
from pathlib import Path

_UNICODE_SPACES = dict.fromkeys(
    map(ord, "\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"),
    " ",
)


class WorkspaceEscape(Exception):
    """The requested path is outside the workspace; the message says how and what to do."""


def _normalize(raw: str) -> str:
    text = raw.translate(_UNICODE_SPACES)
    return text[1:] if text.startswith("@") else text


def confine(raw: str, workspace: Path) -> Path:
    """Return the absolute path for ``raw`` if it stays inside ``workspace``, else raise."""
    if not isinstance(raw, str) or raw == "":
        raise WorkspaceEscape("path must be a non-empty string")
    if "\x00" in raw:
        raise WorkspaceEscape("path contains a NUL byte")
    root = Path(os.path.abspath(workspace))
    real_root = Path(os.path.realpath(root))
    text = _normalize(raw)
    if text == "~" or text.startswith("~/") or text.startswith("~\\"):
        text = os.path.expanduser(text)
    candidate = Path(text)
    if candidate.is_absolute():
        lexical = Path(os.path.normpath(candidate))
        if not (lexical.is_relative_to(root) or lexical.is_relative_to(real_root)):
            raise WorkspaceEscape(
                f"absolute path {raw!r} is outside the workspace {root}; use a path inside the workspace"
            )
    else:
        lexical = Path(os.path.normpath(root / candidate))
        if not lexical.is_relative_to(root):
            raise WorkspaceEscape(
                f"path {raw!r} escapes the workspace {root} through '..'; use a path inside the workspace"
            )
    # Resolve symlinks on the deepest part that exists; the rest cannot redirect yet.
    existing = lexical
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent
    resolved = Path(os.path.realpath(existing)) / lexical.relative_to(existing)
    if not resolved.is_relative_to(real_root):
        raise WorkspaceEscape(
            f"path {raw!r} resolves through a symlink to {resolved}, outside the workspace {root}"
        )
    return lexical


def display_path(path: Path, workspace: Path) -> str:
    """Workspace-relative POSIX form for messages (absolute if it is the root itself)."""
    try:
        rel = path.relative_to(workspace)
    except ValueError:
        return str(path)
    return rel.as_posix() or "."
