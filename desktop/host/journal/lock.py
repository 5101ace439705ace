"""One writer per session (SPEC T6): an OS lock on a small file beside the session.

Why a separate ``<session>.lock`` file rather than locking the journal itself: on Windows a locked
byte range cannot be read by others, and the second window must still be able to read the session.
The lock file also says who holds it, so the read-only message can name the other window's process.
The lock file is never deleted: deleting it would let two processes lock two different inodes.

POSIX uses ``flock`` (per open file, so a second open in the same process is refused too, and it is
released by the OS when the process dies, even on SIGKILL). Windows uses ``msvcrt.locking`` on one
byte far past the end of the file (untested here, kept for parity).
"""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

import orjson

_WINDOWS_LOCK_OFFSET = 1 << 30


def lock_path_for(session_path: Path) -> Path:
    return session_path.with_name(session_path.name + ".lock")


class LockHeld(Exception):
    """Another writer holds the session; ``user_message`` says so in plain words."""

    def __init__(self, path: Path, holder: dict[str, Any] | None) -> None:
        self.path = path
        self.holder = holder
        self.user_message = _describe_holder(holder)
        super().__init__(self.user_message)


def _describe_holder(holder: dict[str, Any] | None) -> str:
    who = "another Pi Desktop window"
    if holder:
        pid = holder.get("pid")
        host = holder.get("host")
        since = holder.get("since")
        if pid == os.getpid() and host == socket.gethostname():
            who = "this same Pi Desktop window (it already has the session open)"
        else:
            details = [f"process {pid}"] if pid else []
            if host:
                details.append(f"on {host}")
            if isinstance(since, int):
                details.append("since " + time.strftime("%H:%M:%S", time.localtime(since / 1000)))
            if details:
                who += f" ({' '.join(details)})"
    return (
        f"This session is open for writing in {who}, so it is shown here read-only. "
        "You can read it; to continue the conversation, close it there and reopen it here."
    )


class SessionLock:
    """An acquired writer lock; release it with ``release`` (the OS also drops it on exit)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, path: Path) -> SessionLock:
        """Take the lock without waiting; raises ``LockHeld`` if taken, ``OSError`` if impossible."""
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o644)
        try:
            if not _try_lock(fd):
                raise LockHeld(path, _read_holder(path))
            _write_holder(fd)
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                _unlock(fd)
            finally:
                os.close(fd)


def _read_holder(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as handle:
            data = orjson.loads(handle.read(4096).strip() or b"null")
    except (OSError, orjson.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _write_holder(fd: int) -> None:
    info = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time_ns() // 1_000_000}
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, orjson.dumps(info) + b"\n")


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
