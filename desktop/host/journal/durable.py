"""The few OS calls that make bytes durable, in one place so every platform quirk lives here.

``fsync`` on macOS only reaches the drive's cache; ``F_FULLFSYNC`` reaches the platter. On Linux
``fdatasync`` is enough for appends (it still flushes the new file size). A new file is durable only
once its directory entry is, hence ``private_files.sync_dir`` after create and after a rename.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from desktop.host.private_files import create_private


def sync_file(fd: int) -> None:
    if sys.platform == "darwin":  # pragma: no cover - macOS only
        import fcntl  # not a budget: F_FULLFSYNC exists on macOS only

        fcntl.fcntl(fd, fcntl.F_FULLFSYNC)
    elif hasattr(os, "fdatasync"):
        os.fdatasync(fd)
    else:  # pragma: no cover - Windows
        os.fsync(fd)


def write_all(fd: int, data: bytes) -> None:
    """``os.write`` may write less than asked (a full disk shows up that way first)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:  # pragma: no cover - defensive
            raise OSError("write returned no progress")
        view = view[written:]


def write_new_file(path: Path, data: bytes) -> None:
    """Create ``path`` (must not exist, made 0600: design X22), write ``data`` and fsync it."""
    fd = create_private(path)
    try:
        write_all(fd, data)
        sync_file(fd)
    finally:
        os.close(fd)
