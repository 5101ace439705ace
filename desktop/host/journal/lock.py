"""One writer per session *file*, not per file name (design T6, T8).

The lock is taken on the session file itself: an OS lock on an open descriptor of the file, so
it belongs to the file's identity (device + inode) and every other name of the same file (a
symlink, a hard link, a path through another mount of the folder) meets the same lock and opens
read-only with the usual message. ``SessionLock.identity`` records the (device, inode) pair the
writer must keep finding at its path before every append.

Beside the session, ``<real name>.lock`` is a *record* only: who holds the session (process,
host, since when), so the read-only message can name the other window. It is written when the
session is created or first appended to, never by opening alone (design G12: looking writes
nothing; until then a second window says "another Pi Desktop window"). It carries no lock and
is never trusted: it is created with ``O_EXCL | O_NOFOLLOW | O_CLOEXEC``; an existing one is
never opened for writing, truncated or rewritten; a fresh record is written to a new temporary
file and renamed over it (a rename replaces the *name*, never the content of the file the name
pointed to, so a record that is a hard link to another file leaves that file alone). A record
path that is a symbolic link, a directory or anything but a regular file is a ``LockPathError``
and nothing is written: the session opens read-only and says why.

POSIX uses ``flock`` (per open file description, so a second open in the same process is
refused too, and the OS drops it when the process dies, even on SIGKILL). Windows uses
``msvcrt.locking`` on one byte far past the end of the file, which keeps the rows readable by
the read-only window (kept for parity; not exercised on Windows here).
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import stat
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

_WINDOWS_LOCK_OFFSET = 1 << 30
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)
_RECORD_LIMIT = 4096


@dataclass(frozen=True, slots=True)
class FileIdentity:
    """Which file a writer owns: the (device, inode) pair behind every name."""

    device: int
    inode: int

    @classmethod
    def of(cls, fd: int) -> FileIdentity:
        info = os.fstat(fd)
        return cls(info.st_dev, info.st_ino)

    def same_file(self, info: os.stat_result) -> bool:
        return (info.st_dev, info.st_ino) == (self.device, self.inode)


def lock_path_for(session_path: Path) -> Path:
    """The holder record of a session: beside its *real* path, so symlink aliases share it."""
    real = Path(os.path.realpath(session_path))
    return real.with_name(real.name + ".lock")


#: The (device, inode) of every session file this process holds: "this same window" is known
#: without a record, which opening alone does not write.
_HELD_HERE: set[tuple[int, int]] = set()


class LockHeld(Exception):
    """Another writer holds the session; ``user_message`` says so in plain words."""

    def __init__(self, holder: dict[str, Any] | None, *, here: bool = False) -> None:
        self.user_message = _describe_holder(holder, here=here)
        super().__init__(self.user_message)


class LockPathError(OSError):
    """The holder record's path is not a regular file (a symlink, a folder, a FIFO, ...)."""

    def __init__(self, path: Path, what: str) -> None:
        self.user_message = (
            f"The lock record {path} is {what}, not a regular file, so this session is shown "
            "read-only and nothing was written. Remove it to continue the session."
        )
        super().__init__(errno.EEXIST, self.user_message, str(path))


def _describe_holder(holder: dict[str, Any] | None, *, here: bool = False) -> str:
    who = "another Pi Desktop window"
    if here:
        who = "this same Pi Desktop window (it already has the session open)"
    elif holder and not (holder.get("pid") == os.getpid() and holder.get("host") == socket.gethostname()):
        # (A record of this process that no lock here holds is stale: the holder has not written.)
        pid, host, since = holder.get("pid"), holder.get("host"), holder.get("since")
        details = [f"process {pid}"] if isinstance(pid, int) else []
        if isinstance(host, str) and host:
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
    """The writer lock on one session file; release it with ``release`` (the OS also drops it on exit)."""

    def __init__(self, path: Path, fd: int, identity: FileIdentity) -> None:
        self.path = path
        self.identity = identity
        self._fd: int | None = fd
        self._recorded = False

    @classmethod
    def acquire(cls, session_path: Path) -> SessionLock:
        """Lock the file at ``session_path`` without waiting.

        Raises ``LockHeld`` if another writer holds this file (under any name),
        ``LockPathError`` if the holder record's path is not a regular file, and ``OSError``
        if the file cannot be opened.
        """
        check_record_path(lock_path_for(session_path))
        fd = os.open(session_path, os.O_RDONLY | _O_CLOEXEC | _O_BINARY)
        try:
            return cls.adopt(fd, session_path, record=False)
        except BaseException:
            os.close(fd)
            raise

    @classmethod
    def adopt(cls, fd: int, session_path: Path, *, record: bool = True) -> SessionLock:
        """Lock the file open as ``fd`` (owned by the lock from now on); with ``record``, also
        record the holder now (a new session), else at the first ``record_holder``."""
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(session_path))
        identity = FileIdentity.of(fd)
        if not _try_lock(fd):
            here = (identity.device, identity.inode) in _HELD_HERE
            raise LockHeld(_read_holder(lock_path_for(session_path)), here=here)
        _HELD_HERE.add((identity.device, identity.inode))
        lock = cls(session_path, fd, identity)
        if record:
            try:
                lock.record_holder()
            except BaseException:
                _HELD_HERE.discard((identity.device, identity.inode))
                _unlock(fd)
                raise
        return lock

    def record_holder(self) -> None:
        """Write the holder record once (before the first row this writer appends); raises
        ``LockPathError`` when its path stopped being a regular file meanwhile."""
        if self._recorded:
            return
        try:
            _write_record(lock_path_for(self.path))
        except LockPathError:
            raise
        except OSError:
            pass  # the record is information only; the lock on the file is what counts
        self._recorded = True

    def release(self) -> None:
        """Drop the record this lock wrote (still under the lock, so no other holder's record is
        touched), then the lock."""
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                if self._recorded:
                    _remove_own_record(lock_path_for(self.path))
            finally:
                _HELD_HERE.discard((self.identity.device, self.identity.inode))
                try:
                    _unlock(fd)
                finally:
                    os.close(fd)


def check_record_path(record: Path) -> None:
    """Refuse a record path that is not absent or a regular file, before anything is locked."""
    try:
        info = os.lstat(record)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise LockPathError(record, "a symbolic link")
    if stat.S_ISDIR(info.st_mode):
        raise LockPathError(record, "a folder")
    if not stat.S_ISREG(info.st_mode):
        raise LockPathError(record, "a special file")


def _read_holder(record: Path) -> dict[str, Any] | None:
    """The record's content, read without following a link or blocking on a FIFO."""
    try:
        fd = os.open(record, os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = orjson.loads(os.read(fd, _RECORD_LIMIT).strip() or b"null")
    except (OSError, orjson.JSONDecodeError):
        return None
    finally:
        os.close(fd)
    return data if isinstance(data, dict) else None


def _remove_own_record(record: Path) -> None:
    """Remove the holder record if it is this process's (a stale one would name a window that
    is gone); anything else at that name is left alone."""
    holder = _read_holder(record)
    if holder and holder.get("pid") == os.getpid() and holder.get("host") == socket.gethostname():
        with contextlib.suppress(OSError):  # information only
            os.unlink(record)


def _write_record(record: Path) -> None:
    """Publish who holds the session; never writes into a file this call did not create."""
    info = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time_ns() // 1_000_000}
    line = orjson.dumps(info) + b"\n"
    try:
        _write_new(record, line)
    except FileExistsError:
        check_record_path(record)
        temp = record.with_name(f".{record.name}.{os.getpid()}.new")
        temp.unlink(missing_ok=True)
        _write_new(temp, line)
        try:
            os.replace(temp, record)  # replaces the name only; a symlink put there meanwhile is not followed
        except OSError:
            temp.unlink(missing_ok=True)
            check_record_path(record)
            raise


def _write_new(path: Path, data: bytes) -> None:
    """Create ``path`` (never an existing file, never through a link) holding ``data``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC | _O_BINARY, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


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
