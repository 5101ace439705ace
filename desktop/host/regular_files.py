"""Opening a file that content named, refusing anything but a regular file (design X24).

A FIFO blocks the reader until someone writes to it, a device never ends (``/dev/zero``) or
answers something else each time, and a folder is not a session. Each is refused before it is
opened: the path is checked with ``stat``, opened non-blocking (so a FIFO swapped in meanwhile
cannot block the open) and checked again on the open descriptor. ``status``, ``payload``,
``whatif``, the window's File → Open and the session browser all read through here, so they
refuse the same things with the same words.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

_O_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_BINARY", 0)
)


def special_kind(mode: int) -> str:
    """What a file that is not a regular file is, as a user reads it ("a FIFO (named pipe)")."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


class NotRegularFile(OSError):
    """The path is a directory, a FIFO, a device or a socket; ``kind`` (and ``strerror``) say which."""

    kind: str = "not a regular file"


def _refuse(path: str | os.PathLike[str], mode: int) -> NotRegularFile:
    kind = special_kind(mode)
    error = NotRegularFile(errno.EINVAL, f"it is {kind}, not a regular file", os.fspath(path))
    error.kind = kind
    return error


def open_regular_fd(path: str | os.PathLike[str]) -> int:
    """A read-only descriptor of ``path`` (the caller closes it), or ``NotRegularFile``."""
    status = os.stat(path)
    if not stat.S_ISREG(status.st_mode):
        raise _refuse(path, status.st_mode)
    fd = os.open(path, _O_FLAGS)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):  # swapped after the first check
            raise _refuse(path, status.st_mode)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for reading (binary), or ``NotRegularFile`` for anything but a regular file."""
    fd = open_regular_fd(path)
    try:
        return open(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
