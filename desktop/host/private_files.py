"""Files the app creates are the user's alone: 0600 in 0700 folders, whatever the umask (design X22).

Sessions hold whole conversations, file contents and command output; logs, caches, settings
and exports hold parts of them. ``mkdir`` and ``open`` apply the process umask, so a common
umask of 022 made them 0644 in 0755 folders, readable by every local user. Here modes are
given explicitly and then set with ``chmod``, because a umask can also take bits the owner
needs. Only what this call creates is changed: an existing folder or file keeps its mode
(a user who shared a folder on purpose keeps it shared). On Windows the user's profile ACL
already keeps these files private; modes there mean only "read-only", so nothing is set.
"""

from __future__ import annotations

import os
from pathlib import Path

PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700
_POSIX = os.name != "nt"
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)


def make_private_dirs(folder: Path) -> None:
    """``folder`` and every missing parent created 0700; existing ones are left as they are."""
    missing: list[Path] = []
    current = Path(folder)
    while not os.path.lexists(current) and current != current.parent:
        missing.append(current)
        current = current.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, PRIVATE_DIR)
        except FileExistsError:
            continue  # made meanwhile by someone else: theirs, not ours to change
        if _POSIX:
            os.chmod(directory, PRIVATE_DIR)
    if not os.path.isdir(folder):
        raise NotADirectoryError(f"not a folder: {folder}")


def create_private(path: str | os.PathLike[str], flags: int = os.O_WRONLY) -> int:
    """A new file (it must not exist) opened with ``flags``, mode 0600; returns its descriptor."""
    fd = os.open(path, flags | os.O_CREAT | os.O_EXCL | _O_CLOEXEC | _O_BINARY, PRIVATE_FILE)
    if _POSIX:
        os.fchmod(fd, PRIVATE_FILE)
    return fd


def open_private_append(path: str | os.PathLike[str]) -> int:
    """``path`` opened for appending: created 0600 if new, an existing file keeps its mode."""
    try:
        return create_private(path, os.O_WRONLY | os.O_APPEND)
    except FileExistsError:
        return os.open(path, os.O_WRONLY | os.O_APPEND | _O_CLOEXEC | _O_BINARY)


def sync_dir(path: Path) -> None:
    """fsync a directory so a created, renamed or linked entry survives a power cut (POSIX only)."""
    if not _POSIX:  # pragma: no cover - directories cannot be opened on Windows
        return
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_file(target: Path, data: bytes) -> None:
    """``target`` replaced atomically by ``data``, durably; a new file is 0600 and an existing
    one keeps its mode. The temporary file's name is unique, so two threads replacing the same
    file never write into each other's."""
    try:
        mode = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        mode = PRIVATE_FILE
    temporary = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = create_private(temporary)
    try:
        try:
            if _POSIX:
                os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    sync_dir(target.parent)
