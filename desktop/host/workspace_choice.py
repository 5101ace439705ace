"""Which folder a session may work in: the user's choice, never a file's (design A10).

The workspace is the folder the file tools are confined to and the guidance is read from, so it
is a grant. A session file records the folder it was made in (its header's ``cwd``), but a file
can come from anyone: a header that says ``"/"`` would confine the tools to the whole disk. So
the recorded folder is only a suggestion, used without asking when it is the folder the user
opened Pi Desktop from or one the user confirmed before (``desktop.host.trust``), and asked
about otherwise. Some folders are never a workspace, whoever names them: the file system's root,
the home folder itself (and the folders above it), and the system's own folders.

Everything here is pure (paths in, a verdict out), so the command line, the window, a fork of
another agent's session and a new session all apply the same rule.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath
from typing import NamedTuple

#: System folders that are never a workspace (the folder itself; their subfolders may be one).
_POSIX_SYSTEM = frozenset(
    PurePosixPath(p)
    for p in (
        "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media",
        "/mnt", "/opt", "/proc", "/root", "/run", "/sbin", "/srv", "/sys", "/tmp", "/usr",
        "/usr/bin", "/usr/lib", "/usr/local", "/usr/sbin", "/usr/share", "/var", "/var/tmp",
        "/Applications", "/Library", "/System", "/Users", "/Volumes", "/private", "/private/tmp",
        "/private/var", "/private/etc",
    )
)  # fmt: skip
#: Pseudo file systems: nothing under them is a workspace.
_POSIX_PSEUDO = tuple(PurePosixPath(p) for p in ("/proc", "/sys", "/dev"))
_WINDOWS_SYSTEM = (
    "windows",
    "program files",
    "program files (x86)",
    "programdata",
    "users",
    "$recycle.bin",
    "system volume information",
)


def refused_workspace(folder: PurePath, home: PurePath) -> str | None:
    """Why ``folder`` (absolute, resolved) can never be a workspace, or None when it can be.

    ``home`` is the user's home folder, resolved. The reason is one plain sentence naming the
    folder, for a dialog or the command line's one error line.
    """
    if folder.parent == folder:
        return f"{folder} is the root of a file system, which cannot be a workspace"
    if folder == home:
        return f"{folder} is your home folder, which cannot be a workspace; choose a project folder in it"
    if folder in home.parents:
        return f"{folder} holds your home folder, so it cannot be a workspace"
    if isinstance(folder, PureWindowsPath):
        parts = [part.lower() for part in folder.parts[1:]]
        if parts and parts[0] in _WINDOWS_SYSTEM and (len(parts) == 1 or parts[0] == "windows"):
            return f"{folder} is a system folder, which cannot be a workspace"
        return None
    posix = PurePosixPath(folder.as_posix())
    if posix in _POSIX_SYSTEM or any(posix.is_relative_to(p) for p in _POSIX_PSEUDO):
        return f"{folder} is a system folder, which cannot be a workspace"
    return None


class WorkspaceChoice(NamedTuple):
    """What to do with a session's recorded folder: use ``folder`` now, or ask first.

    ``ask`` is set when the recorded folder is a new one: the window shows ``suggested`` and
    uses it only if the user confirms, else ``folder`` (the folder the user opened from).
    ``folder`` is None when there is no usable folder without asking (the folder Pi Desktop
    started in is itself refused); ``refused`` says why the recorded folder was not suggested.
    """

    folder: Path | None
    ask: bool = False
    suggested: Path | None = None
    refused: str | None = None


def choose_workspace(
    recorded: Path | None,
    opened_from: Path | None,
    confirmed: frozenset[Path] | set[Path],
    home: Path,
) -> WorkspaceChoice:
    """The workspace rule for a session that records ``recorded`` (resolved, an existing folder,
    or None), opened by a user who started Pi Desktop in ``opened_from`` (resolved) and has
    confirmed the folders in ``confirmed`` before (design A10)."""
    fallback = (
        opened_from if opened_from is not None and refused_workspace(opened_from, home) is None else None
    )
    if recorded is None:
        return WorkspaceChoice(fallback)
    refused = refused_workspace(recorded, home)
    if refused is not None:
        return WorkspaceChoice(fallback, refused=refused)
    if recorded == opened_from or recorded in confirmed:
        return WorkspaceChoice(recorded)
    return WorkspaceChoice(fallback, ask=True, suggested=recorded)


def home_folder() -> Path:
    """The user's home folder, resolved (the boundary of guidance and of workspaces)."""
    return Path(os.path.realpath(Path.home()))
